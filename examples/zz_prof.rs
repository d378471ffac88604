use langgraph_codec::{JsonPlusSerializer, Serializer};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;
struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        unsafe { std::alloc::System.realloc(p, l, n) }
    }
}
#[global_allocator]
static A: Counting = Counting;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(format!("vectors/payloads/{}.msgpack", a[1])).unwrap();
    let mode = a[2].clone();
    let n: usize = a[3].parse().unwrap();
    let s = JsonPlusSerializer::new();
    let v = s.loads_typed("msgpack", &bytes).unwrap();
    let a0 = ALLOCS.load(Relaxed);
    let t = Instant::now();
    let mut total = 0usize;
    for _ in 0..n {
        match mode.as_str() {
            "loads" => {
                let v = s.loads_typed("msgpack", &bytes).unwrap();
                total += matches!(v, langgraph_codec::Value::Map(_)) as usize
            }
            "dumps" => total += s.dumps_typed(&v).unwrap().data.len(),
            "rmpv" => {
                let v = rmpv::decode::read_value(&mut &bytes[..]).unwrap();
                total += v.is_map() as usize
            }
            _ => panic!(),
        }
    }
    println!(
        "{} {mode}: {:.1} us ({total}) allocs/iter {}",
        a[1],
        t.elapsed().as_secs_f64() * 1e6 / n as f64,
        (ALLOCS.load(Relaxed) - a0) / n.max(1)
    );
}
