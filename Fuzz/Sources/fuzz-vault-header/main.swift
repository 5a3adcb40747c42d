// The vault file header (LatchkeyVault/VaultFormat.swift): read before anything authenticates it.
internal import FuzzSupport

@testable internal import LatchkeyVault

/// A key to try the sealed box with: opening must fail cleanly, never trap.
enum Fixed {
    static let key = VaultKey(bytes: [UInt8](repeating: 7, count: 32))!
}

@_cdecl("LLVMFuzzerTestOneInput")
func testOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    guard let (header, headerBytes, sealed) = try? VaultFormat.parse(bytes) else { return 0 }
    // What was split off must be the file, and the header must write back to the same bytes.
    precondition(headerBytes + sealed == bytes, "header and sealed box do not add up to the file")
    precondition(header.encoded() == headerBytes, "the parsed header does not encode back to its bytes")
    precondition(sealed.count >= 28, "a sealed box shorter than nonce and tag was accepted")
    _ = try? VaultFormat.open(sealed: sealed, headerBytes: headerBytes, key: Fixed.key)
    return 0
}

runFuzzer(testOneInput)
