use gpukit::prelude::*;

#[kernel]
fn k(a: &mut [f32]) {
    println!("{}", a[0]);
}

fn main() {}
