use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [u32]) {
    let mut counts = [0u32; 4];
    atomic_add(&mut counts[0], 1);
}

fn main() {}
