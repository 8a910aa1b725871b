//! Row operations: selection ([`take`]: gather and filter), comparisons for boolean masks
//! ([`compare`]), ordering ([`sort`]) and joins ([`join`]); their device kernels are in
//! `kernels`.

pub mod compare;
pub mod join;
pub(crate) mod kernels;
pub mod sort;
pub mod take;
#[cfg(test)]
pub(crate) mod testutil;
