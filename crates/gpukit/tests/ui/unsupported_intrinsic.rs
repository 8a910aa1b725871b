use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    let i = grid(1);
    a[i] = 1.0;
    syncwarp();
}

fn main() {}
