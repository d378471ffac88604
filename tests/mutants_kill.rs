//! Tests that kill the mutants the mutation run of MUTANTS.md found surviving. Each
//! checks behaviour through the public API, with expected values from the msgpack
//! specification, Python or first principles, never from the code under test.
