//! Writes a store shaped like a real graph's (message blobs, small channel values,
//! pending writes, Python's channel versions, a subgraph namespace in every fourth
//! thread, an interrupt ending every fifth) with this crate's savers, whose rows are Python's byte for byte: for
//! trying `lgcodec store`, its CI check and its bench.
//!
//! ```text
//! cargo run --features sqlite,postgres --example store_fixture -- STORE THREADS STEPS [--key KEY] [--zlib] [--prefix P] [--age-days N]
//! ```
//! STORE is `sqlite:PATH`, a path, or a `postgres://` URL (Python's tables are created).
//! `--age-days N` dates each thread in the past, spread over N days (its latest
//! checkpoint a whole number of hours and 30 minutes ago; a third of the threads began
//! N/3 and a third 2N/3 days before that), with checkpoint ids Python's `uuid6` would
//! have made then: a store for retention rules (idle and hard-age TTLs).
//! Prints the number of serialized rows written (SQLite layout: checkpoints + writes).

#[path = "../tests/support/store_fixture.rs"]
mod store_fixture;

use langgraph_codec::saver::postgres::PostgresSaver;
use langgraph_codec::saver::sqlite::SqliteSaver;
use store_fixture::{fill, serializer, Shape};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage =
        "usage: store_fixture STORE THREADS STEPS [--key KEY] [--zlib] [--prefix P] [--age-days N]";
    let (Some(store), Some(threads), Some(steps)) = (args.first(), args.get(1), args.get(2)) else {
        return Err(usage.into());
    };
    let mut shape = Shape {
        threads: threads.parse()?,
        steps: steps.parse()?,
        ..Shape::default()
    };
    let mut prefix = "thread-".to_owned();
    let mut rest = args.iter().skip(3);
    while let Some(a) = rest.next() {
        match a.as_str() {
            "--key" => shape.key = rest.next().cloned(),
            "--zlib" => shape.zlib = true,
            "--prefix" => prefix = rest.next().cloned().ok_or(usage)?,
            "--age-days" => shape.age_days = Some(rest.next().ok_or(usage)?.parse()?),
            _ => return Err(usage.into()),
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let rows = runtime.block_on(async {
        if store.starts_with("postgres://") || store.starts_with("postgresql://") {
            let saver = PostgresSaver::builder_from_url(store)?
                .serializer(serializer(&shape))
                .build()?;
            saver.setup().await?;
            Ok::<usize, Box<dyn std::error::Error>>(fill(&saver, &shape, &prefix).await)
        } else {
            let path = store.strip_prefix("sqlite:").unwrap_or(store);
            let saver = SqliteSaver::builder(path)
                .serializer(serializer(&shape))
                .create(true)
                .open()?;
            Ok(fill(&saver, &shape, &prefix).await)
        }
    })?;
    println!("{rows}");
    Ok(())
}
