//! The flags that size and pace a command's batches, declared once for every
//! command that takes them. Each command words their help for its own unit (rows,
//! checkpoints, threads) and default with `#[command(mut_arg("batch_size", …))]`.

use clap::Args;

/// `--batch-size N`: how many go in one transaction.
#[derive(Args, Debug)]
pub struct BatchSize {
    /// How many go in one transaction (smaller batches hold the store's locks for less
    /// time beside live writers).
    #[arg(long, value_name = "N", value_parser = one_or_more)]
    pub batch_size: Option<u64>,
}

impl BatchSize {
    /// `options` with the size given set by `set`, else as they are.
    pub fn apply<O>(&self, options: O, set: impl FnOnce(O, usize) -> O) -> O {
        with_size(options, self.batch_size, set)
    }
}

/// `--batch-size N` and `--batch-bytes BYTES`: how many, and how many bytes of stored
/// values at most, go in one transaction.
#[derive(Args, Debug)]
pub struct Batching {
    #[command(flatten)]
    pub size: BatchSize,
    /// Bytes of stored values one transaction holds at most (a larger value goes
    /// alone): what bounds the command's memory.
    #[arg(long, value_name = "BYTES", value_parser = one_or_more)]
    pub batch_bytes: Option<u64>,
}

impl Batching {
    /// `options` with the sizes given set by `size` and `bytes`, else as they are.
    pub fn apply<O>(
        &self,
        options: O,
        size: impl FnOnce(O, usize) -> O,
        bytes: impl FnOnce(O, usize) -> O,
    ) -> O {
        let options = self.size.apply(options, size);
        with_size(options, self.batch_bytes, bytes)
    }
}

/// A count given on the command line: a whole number, 1 or more (clap's own range
/// check says "0 is not in 1..18446744073709551615").
pub fn one_or_more(given: &str) -> Result<u64, String> {
    match given.parse::<u64>() {
        Ok(0) => Err("0 would do nothing: give 1 or more".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err("not a whole number: give 1 or more, in digits".to_owned()),
    }
}

/// `options` with a size given on the command line set by `set` (a count or bytes past
/// `usize` taken as the most there is), else as they are.
fn with_size<O>(options: O, given: Option<u64>, set: impl FnOnce(O, usize) -> O) -> O {
    match given {
        Some(n) => set(options, usize::try_from(n).unwrap_or(usize::MAX)),
        None => options,
    }
}

/// `--max-rows-per-sec N`: the pace a command reads (or, for `import`, writes) at, on
/// average since it started.
#[derive(Args, Debug)]
pub struct Pace {
    /// At most this many rows read per second, on average (spares a busy store).
    #[arg(long, value_name = "N", value_parser = one_or_more)]
    pub max_rows_per_sec: Option<u64>,
}
