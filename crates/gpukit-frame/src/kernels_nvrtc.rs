//! Every kernel of the crate compiles to PTX with NVRTC (the CUDA C++ that `#[kernel]` made
//! from it, with its `#[device]` helpers). Needs libnvrtc only, no GPU; without it the test
//! prints `skipped: ...` and passes (fails with `GPUKIT_REQUIRE_NVRTC=1`).

use gpukit::__private::KernelInfo;

use crate::rolling::{apply as rolling_apply, window_bounds, window_combine, window_scans};
use crate::str_ops::{case, find, launch, length, replace, slice, split};

#[test]
fn every_frame_kernel_compiles_with_nvrtc() {
    let kernels: [&KernelInfo; 16] = [
        &length::row_len_bytes::INFO,
        &length::row_len_chars::INFO,
        &case::case_map::INFO,
        &find::find_literal::INFO,
        &replace::replace_literal::INFO,
        &split::find_part::INFO,
        &slice::char_range::INFO,
        &launch::shift_into_offsets::INFO,
        &launch::range_lengths::INFO,
        &launch::copy_ranges::INFO,
        &crate::validity::and_bits::INFO,
        &window_scans::INFO,
        &window_bounds::INFO,
        &window_combine::INFO,
        &crate::validity::pack_flags::INFO,
        &rolling_apply::unpack_flags::INFO,
    ];
    gpukit::testing::assert_kernels_compile(&kernels);
}
