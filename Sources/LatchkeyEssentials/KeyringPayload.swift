import CLatchkeySys

/// The one read of a key's payload from the user keyring, for the launcher and the full command.
public enum KeyringPayload {
    /// The kernel keeps at most 32,767 bytes in a `user` key (keyrings(7)), so one buffer of that
    /// size reads every payload whole: a token, a vault key, or many directory mappings.
    static let capacity = 32_768

    /// The payload of the key named `description` in the user keyring, or `nil` when there is
    /// none, it expired, or it cannot be read.
    public static func read(description: String) -> [UInt8]? {
        let key = lk_search_user_key(lk_user_keyring(), description)
        guard key >= 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: capacity)
        let length = buffer.withUnsafeMutableBytes { lk_read_key(Int32(truncatingIfNeeded: key), $0.baseAddress, $0.count) }
        guard length >= 0, length <= buffer.count else { return nil }
        return Array(buffer[0..<length])
    }
}
