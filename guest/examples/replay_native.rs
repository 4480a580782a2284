//! Replays a trace natively (no wasm): `cargo run -p loopguard-policy --example replay_native -- CONFIG TRACE`.
//! Used to compare the native core with the component (differential testing).
fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: replay_native CONFIG TRACE");
        std::process::exit(2);
    }
    let read = |p: &str| {
        std::fs::read_to_string(p).unwrap_or_else(|e| {
            eprintln!("replay_native: {p}: {e}");
            std::process::exit(2)
        })
    };
    match loopguard_policy::replay::replay(&read(&args[1]), &read(&args[2])) {
        Ok(out) => print!("{out}"),
        Err(e) => {
            eprintln!("replay_native: {e}");
            std::process::exit(2);
        }
    }
}
