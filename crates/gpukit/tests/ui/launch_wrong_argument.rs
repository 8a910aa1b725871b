use gpukit::prelude::*;

#[kernel]
fn k(a: &[f32], out: &mut [f32]) {
    let i = grid(1);
    out[i] = a[i];
}

fn run() -> gpukit::Result<()> {
    let a = Array::<f64>::zeros(4)?;
    let mut out = Array::<f32>::zeros(4)?;
    launch!(k[1, 4](&a, &mut out))
}

fn main() {
    let _ = run();
}
