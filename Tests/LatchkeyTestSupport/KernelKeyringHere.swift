import LatchkeyDoctor

/// Whether this machine's kernel keyring stores and gives back a key (doctor's own probe): the
/// tests of token copies run only where it does.
public let kernelKeyringWorks = Diagnosis.Probes.live.kernelKeyring() == nil
