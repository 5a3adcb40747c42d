import LatchkeyProviders

extension FirebaseSettings {
    /// What the project's ID tokens must satisfy.
    package var idTokenExpectation: IDTokenExpectation {
        IDTokenExpectation(issuer: issuer, audience: projectID, jwksURI: jwksURL, nonce: nil)
    }
}
