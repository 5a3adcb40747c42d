import Synchronization

/// The provider catalog, read from providers.d the first time something asks for it.
///
/// `status --json`, `token`, `unlock` and `lock` look at no provider (a token only does when it
/// must be refreshed) while the vault is locked, and parsing every file was a fifth of what
/// `status --json` cost. With an unlock cached, a read of the vault rewrites the launcher's token
/// copies, which need `confirm` from the provider files (`ReleasePolicy`); the launcher answers
/// those commands itself then, so the full command rarely pays it. A command that does use the
/// catalog reads it whole, as before, so it reports every broken file where it did.
package final class LazyProviderCatalog: Sendable {
    private let load: @Sendable () -> ProviderCatalog
    private let loaded = Mutex<ProviderCatalog?>(nil)

    package init(_ load: @escaping @Sendable () -> ProviderCatalog) {
        self.load = load
    }

    package var catalog: ProviderCatalog {
        loaded.withLock { loaded in
            if let loaded { return loaded }
            let catalog = load()
            loaded = catalog
            return catalog
        }
    }

    /// Reads providers.d again (a provider file was just added) and returns the new catalog.
    package func reload() -> ProviderCatalog {
        let catalog = load()
        loaded.withLock { $0 = catalog }
        return catalog
    }
}
