import Foundation
import LatchkeyTestSupport

/// This target's `Fixtures` folder.
let fixtures = FixtureFolder(bundle: .module)
