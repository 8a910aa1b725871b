use gpukit::prelude::*;

#[device]
fn helper(x: f32) -> f32 {
    x + grid(1) as f32
}

fn main() {}
