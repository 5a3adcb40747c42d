#ifndef CLATCHKEY_SECRET_H
#define CLATCHKEY_SECRET_H

/// The desktop Secret Service through libsecret, loaded with dlopen only when this keystore is
/// chosen: `latchkey token` on the vault path never loads libsecret or GLib.
///
/// Items use the schema "org.latchkey.VaultKey" with attributes `application` = "latchkey" and
/// `vault` = the vault's path. Every function returns 0 on success; on failure a negative
/// value and, when `error` is not NULL, a malloc'ed message the caller frees.

/// Loads libsecret from `path` (absolute, found and checked by the caller: `SystemLibrary`),
/// GLib coming with it as its dependency: 1 when it is usable, else 0 with `error` set. The
/// functions below fail until it has succeeded. Not thread-safe: the caller loads it once.
int lk_secret_load(const char *path, char **error);

/// Looks up the secret for `vault`: 0 and `*secret` (malloc'ed, caller frees) when found,
/// 1 when there is no such item, negative on failure.
int lk_secret_lookup(const char *vault, char **secret, char **error);

/// Stores `secret` for `vault` in the default collection, labelled `label`.
int lk_secret_store(const char *vault, const char *label, const char *secret, char **error);

/// Deletes the item for `vault`; 0 whether or not it existed.
int lk_secret_clear(const char *vault, char **error);

/// Overwrites and frees a secret returned by lk_secret_lookup.
void lk_secret_free(char *secret);

#endif
