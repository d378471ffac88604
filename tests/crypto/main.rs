//! At-rest encryption: `EncryptedSerializer` against tampering, wrong keys and moved
//! rows, key configuration and rotation, errors that never quote plaintext, and the
//! `+zlib` decompression budget.

mod decompression_budget;
mod encryption;
mod key_error_table;
mod keys;
mod plaintext_errors;
mod settings;
