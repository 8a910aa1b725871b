//! Every kernel of the crate compiles to PTX with NVRTC (the CUDA C++ that `#[kernel]` made
//! from it). Needs libnvrtc only, no GPU; without it the test prints `skipped: ...` and passes
//! (fails with `GPUKIT_REQUIRE_NVRTC=1`).

use gpukit::__private::KernelInfo;

use super::{labels, lloyd, rows, topk, vote};

#[test]
fn every_ml_kernel_compiles_with_nvrtc() {
    let kernels: [&KernelInfo; 32] = [
        &rows::take_rows_f32::INFO,
        &rows::take_rows_f64::INFO,
        &rows::take_rows_i32::INFO,
        &rows::take_rows_i64::INFO,
        &rows::take_rows_u32::INFO,
        &rows::take_rows_u64::INFO,
        &topk::topk_first8_f32::INFO,
        &topk::topk_first8_f64::INFO,
        &topk::topk_merge8_f32::INFO,
        &topk::topk_merge8_f64::INFO,
        &topk::topk_first32_f32::INFO,
        &topk::topk_first32_f64::INFO,
        &topk::topk_merge32_f32::INFO,
        &topk::topk_merge32_f64::INFO,
        &topk::topk_first128_f32::INFO,
        &topk::topk_first128_f64::INFO,
        &topk::topk_merge128_f32::INFO,
        &topk::topk_merge128_f64::INFO,
        &vote::vote_f32::INFO,
        &vote::vote_f64::INFO,
        &vote::mean_f32::INFO,
        &vote::mean_f64::INFO,
        &lloyd::assign_f32::INFO,
        &lloyd::assign_f64::INFO,
        &lloyd::onehot_f32::INFO,
        &lloyd::onehot_f64::INFO,
        &lloyd::closer_f32::INFO,
        &lloyd::closer_f64::INFO,
        &lloyd::count_labels::INFO,
        &labels::run_starts::INFO,
        &labels::label_codes::INFO,
        &labels::confusion_counts::INFO,
    ];
    gpukit::testing::assert_kernels_compile(&kernels);
}
