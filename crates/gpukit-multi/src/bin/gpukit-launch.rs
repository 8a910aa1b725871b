//! `gpukit-launch --nproc N -- program args`: N processes with torchrun's variables
//! (see `gpukit_multi::launch`).

use gpukit_multi::launch::LaunchConfig;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let config = match LaunchConfig::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("gpukit-launch: {e}");
            std::process::exit(2);
        }
    };
    match config.run() {
        Ok(statuses) => {
            // The first failure's code (a process stopped by a signal counts as 1).
            let code = statuses
                .iter()
                .find(|s| !s.success())
                .map(|s| s.code().unwrap_or(1))
                .unwrap_or(0);
            if code != 0 {
                for (i, s) in statuses.iter().enumerate() {
                    eprintln!("gpukit-launch: local rank {i}: {s}");
                }
            }
            std::process::exit(code);
        }
        Err(e) => {
            eprintln!("gpukit-launch: {e}");
            std::process::exit(1);
        }
    }
}
