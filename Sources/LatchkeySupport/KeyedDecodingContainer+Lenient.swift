extension KeyedDecodingContainer {
    /// The member `key` as a `T`; `nil` when it is absent, `null` or of another type.
    ///
    /// For wire members that were always read forgivingly: a display claim of an odd type is
    /// ignored like an absent one, and a required member of the wrong type is reported as missing
    /// by the validation that follows.
    package func lenient<T: Decodable>(_ type: T.Type = T.self, forKey key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }

    /// The member `key` when it is a JSON number (never a boolean).
    package func lenientNumber(forKey key: Key) -> Double? {
        lenient(JSONValue.self, forKey: key)?.number
    }
}
