//! One macro, [`avx2_dispatch!`], that runs a kernel in a copy compiled for AVX2 where the CPU
//! has it and in the baseline copy elsewhere. The kernel is `#[inline(always)]`, so each copy
//! holds its own instance of the loop, and the AVX2 one vectorises four points per instruction.
//! No fused multiply-add is enabled, so both copies give the same bits.

/// `avx2_dispatch!(fn name(args) => kernel);` defines `fn name(args)` that calls
/// `kernel(args)` in its AVX2 copy where `is_x86_feature_detected!` finds AVX2, else directly.
macro_rules! avx2_dispatch {
    ($(#[$doc:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) => $kernel:ident) => {
        $(#[$doc])*
        pub(super) fn $name($($arg: $ty),*) {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) {
                    $kernel($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: `avx2` is the kernel compiled with AVX2 enabled; its only
                    // requirement beyond the safe kernel's is that the CPU executes AVX2,
                    // which the line above established.
                    unsafe { avx2($($arg),*) };
                    return;
                }
            }
            $kernel($($arg),*)
        }
    };
}

pub(super) use avx2_dispatch;
