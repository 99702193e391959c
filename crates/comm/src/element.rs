//! Element types that travel through a communicator, and the type-erased buffers the
//! object-safe [`Communicator`](crate::Communicator) core works on.
//!
//! Contract: the five element kinds (`f64`, `Complex64`, `i64`, `u64`, `u8`) are the only ones
//! a communicator moves. [`Slice`] / [`SliceMut`] borrow a typed buffer without copying and
//! [`Payload`] owns one; [`Element`] converts between the typed and the erased forms, so that
//! back ends can stay object-safe while callers use the generic helpers of
//! [`CommExt`](crate::CommExt). A buffer of the wrong kind or length is a programming error and
//! panics with a message naming both.

use num_complex::Complex64;
use std::fmt::Debug;

/// The kind of the elements of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `f64`
    F64,
    /// `Complex64`
    C64,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// `u8` (raw bytes)
    U8,
}

impl Kind {
    /// Size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            Kind::F64 | Kind::I64 | Kind::U64 => 8,
            Kind::C64 => 16,
            Kind::U8 => 1,
        }
    }
}

/// Reduction operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Element-wise sum (wrapping for integers).
    Sum,
    /// Element-wise maximum (not defined for complex numbers).
    Max,
    /// Element-wise minimum (not defined for complex numbers).
    Min,
}

/// A borrowed, type-erased, read-only buffer.
#[derive(Clone, Copy, Debug)]
pub enum Slice<'a> {
    /// `f64` elements
    F64(&'a [f64]),
    /// complex elements
    C64(&'a [Complex64]),
    /// `i64` elements
    I64(&'a [i64]),
    /// `u64` elements
    U64(&'a [u64]),
    /// bytes
    U8(&'a [u8]),
}

/// A borrowed, type-erased, writable buffer.
#[derive(Debug)]
pub enum SliceMut<'a> {
    /// `f64` elements
    F64(&'a mut [f64]),
    /// complex elements
    C64(&'a mut [Complex64]),
    /// `i64` elements
    I64(&'a mut [i64]),
    /// `u64` elements
    U64(&'a mut [u64]),
    /// bytes
    U8(&'a mut [u8]),
}

/// An owned, type-erased buffer (a message in flight).
#[derive(Clone, Debug, PartialEq)]
pub enum Payload {
    /// `f64` elements
    F64(Vec<f64>),
    /// complex elements
    C64(Vec<Complex64>),
    /// `i64` elements
    I64(Vec<i64>),
    /// `u64` elements
    U64(Vec<u64>),
    /// bytes
    U8(Vec<u8>),
}

/// Runs `$body` with `$v` bound to the typed slice inside a [`Slice`], [`SliceMut`] or
/// [`Payload`] (all arms share one generic body).
#[macro_export]
#[doc(hidden)]
macro_rules! with_typed {
    ($enum:ident, $e:expr, $v:ident => $body:expr) => {
        match $e {
            $crate::$enum::F64($v) => $body,
            $crate::$enum::C64($v) => $body,
            $crate::$enum::I64($v) => $body,
            $crate::$enum::U64($v) => $body,
            $crate::$enum::U8($v) => $body,
        }
    };
}

/// Runs `$body` with `$s` and `$r` bound to a [`Slice`] and a [`SliceMut`] of the same kind;
/// panics when the kinds differ.
#[macro_export]
#[doc(hidden)]
macro_rules! with_pair {
    ($send:expr, $recv:expr, ($s:ident, $r:ident) => $body:expr) => {
        match ($send, $recv) {
            ($crate::Slice::F64($s), $crate::SliceMut::F64($r)) => $body,
            ($crate::Slice::C64($s), $crate::SliceMut::C64($r)) => $body,
            ($crate::Slice::I64($s), $crate::SliceMut::I64($r)) => $body,
            ($crate::Slice::U64($s), $crate::SliceMut::U64($r)) => $body,
            ($crate::Slice::U8($s), $crate::SliceMut::U8($r)) => $body,
            (s, r) => panic!(
                "planewave-comm: send buffer of {:?} but receive buffer of {:?}",
                s.kind(),
                r.kind()
            ),
        }
    };
}

impl<'a> Slice<'a> {
    /// Element kind.
    pub fn kind(&self) -> Kind {
        match self {
            Slice::F64(_) => Kind::F64,
            Slice::C64(_) => Kind::C64,
            Slice::I64(_) => Kind::I64,
            Slice::U64(_) => Kind::U64,
            Slice::U8(_) => Kind::U8,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        with_typed!(Slice, self, v => v.len())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len() * self.kind().size()
    }
    /// Copy into an owned payload.
    pub fn to_payload(&self) -> Payload {
        match self {
            Slice::F64(v) => Payload::F64(v.to_vec()),
            Slice::C64(v) => Payload::C64(v.to_vec()),
            Slice::I64(v) => Payload::I64(v.to_vec()),
            Slice::U64(v) => Payload::U64(v.to_vec()),
            Slice::U8(v) => Payload::U8(v.to_vec()),
        }
    }
    /// Elements `start..start + len`.
    pub fn sub(&self, start: usize, len: usize) -> Slice<'a> {
        match *self {
            Slice::F64(v) => Slice::F64(&v[start..start + len]),
            Slice::C64(v) => Slice::C64(&v[start..start + len]),
            Slice::I64(v) => Slice::I64(&v[start..start + len]),
            Slice::U64(v) => Slice::U64(&v[start..start + len]),
            Slice::U8(v) => Slice::U8(&v[start..start + len]),
        }
    }
    /// Copy of elements `start..start + len` as a payload.
    pub fn range_payload(&self, start: usize, len: usize) -> Payload {
        match self {
            Slice::F64(v) => Payload::F64(v[start..start + len].to_vec()),
            Slice::C64(v) => Payload::C64(v[start..start + len].to_vec()),
            Slice::I64(v) => Payload::I64(v[start..start + len].to_vec()),
            Slice::U64(v) => Payload::U64(v[start..start + len].to_vec()),
            Slice::U8(v) => Payload::U8(v[start..start + len].to_vec()),
        }
    }
}

impl<'a> SliceMut<'a> {
    /// Element kind.
    pub fn kind(&self) -> Kind {
        match self {
            SliceMut::F64(_) => Kind::F64,
            SliceMut::C64(_) => Kind::C64,
            SliceMut::I64(_) => Kind::I64,
            SliceMut::U64(_) => Kind::U64,
            SliceMut::U8(_) => Kind::U8,
        }
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        with_typed!(SliceMut, self, v => v.len())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len() * self.kind().size()
    }
    /// Read-only view.
    pub fn as_slice(&self) -> Slice<'_> {
        match self {
            SliceMut::F64(v) => Slice::F64(v),
            SliceMut::C64(v) => Slice::C64(v),
            SliceMut::I64(v) => Slice::I64(v),
            SliceMut::U64(v) => Slice::U64(v),
            SliceMut::U8(v) => Slice::U8(v),
        }
    }
    /// Shorter-lived writable view of the same buffer.
    pub fn reborrow(&mut self) -> SliceMut<'_> {
        match self {
            SliceMut::F64(v) => SliceMut::F64(v),
            SliceMut::C64(v) => SliceMut::C64(v),
            SliceMut::I64(v) => SliceMut::I64(v),
            SliceMut::U64(v) => SliceMut::U64(v),
            SliceMut::U8(v) => SliceMut::U8(v),
        }
    }
    /// Split into consecutive disjoint pieces of `counts[i]` elements (the rest is dropped).
    pub fn chunks(self, counts: &[usize]) -> Vec<SliceMut<'a>> {
        fn split<'b, T>(mut v: &'b mut [T], counts: &[usize]) -> Vec<&'b mut [T]> {
            let mut out = Vec::with_capacity(counts.len());
            for &c in counts {
                let (a, b) = std::mem::take(&mut v).split_at_mut(c);
                out.push(a);
                v = b;
            }
            out
        }
        match self {
            SliceMut::F64(v) => split(v, counts).into_iter().map(SliceMut::F64).collect(),
            SliceMut::C64(v) => split(v, counts).into_iter().map(SliceMut::C64).collect(),
            SliceMut::I64(v) => split(v, counts).into_iter().map(SliceMut::I64).collect(),
            SliceMut::U64(v) => split(v, counts).into_iter().map(SliceMut::U64).collect(),
            SliceMut::U8(v) => split(v, counts).into_iter().map(SliceMut::U8).collect(),
        }
    }
    /// Copy `src` into elements `offset..offset + src.len()`; panics on kind mismatch.
    pub fn copy_at(&mut self, offset: usize, src: Slice<'_>) {
        with_pair!(src, self.reborrow(), (s, d) => d[offset..offset + s.len()].copy_from_slice(s))
    }
    /// Copy a whole payload in; panics on kind or length mismatch.
    pub fn copy_from_payload(&mut self, p: &Payload) {
        assert_eq!(
            p.len(),
            self.len(),
            "planewave-comm: message of {} elements received into a buffer of {}",
            p.len(),
            self.len()
        );
        self.copy_at(0, p.as_slice());
    }
    /// Element-wise `self[i] = op(self[i], other[i])`; panics on kind or length mismatch.
    pub fn combine(&mut self, other: Slice<'_>, op: ReduceOp) {
        assert_eq!(
            self.len(),
            other.len(),
            "planewave-comm: reduction length mismatch"
        );
        with_pair!(other, self.reborrow(), (s, d) => {
            for (a, b) in d.iter_mut().zip(s.iter()) {
                *a = Element::combine(op, *a, *b);
            }
        })
    }
}

impl Payload {
    /// Element kind.
    pub fn kind(&self) -> Kind {
        self.as_slice().kind()
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        with_typed!(Payload, self, v => v.len())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Read-only view.
    pub fn as_slice(&self) -> Slice<'_> {
        match self {
            Payload::F64(v) => Slice::F64(v),
            Payload::C64(v) => Slice::C64(v),
            Payload::I64(v) => Slice::I64(v),
            Payload::U64(v) => Slice::U64(v),
            Payload::U8(v) => Slice::U8(v),
        }
    }
    /// Writable view.
    pub fn as_slice_mut(&mut self) -> SliceMut<'_> {
        match self {
            Payload::F64(v) => SliceMut::F64(v),
            Payload::C64(v) => SliceMut::C64(v),
            Payload::I64(v) => SliceMut::I64(v),
            Payload::U64(v) => SliceMut::U64(v),
            Payload::U8(v) => SliceMut::U8(v),
        }
    }
    /// A zero-filled payload.
    pub fn zeros(kind: Kind, len: usize) -> Payload {
        match kind {
            Kind::F64 => Payload::F64(vec![0.0; len]),
            Kind::C64 => Payload::C64(vec![Complex64::new(0.0, 0.0); len]),
            Kind::I64 => Payload::I64(vec![0; len]),
            Kind::U64 => Payload::U64(vec![0; len]),
            Kind::U8 => Payload::U8(vec![0; len]),
        }
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for num_complex::Complex64 {}
    impl Sealed for i64 {}
    impl Sealed for u64 {}
    impl Sealed for u8 {}
}

/// A type a communicator can move (sealed: `f64`, `Complex64`, `i64`, `u64`, `u8`).
pub trait Element:
    Copy + Send + Sync + Default + PartialEq + Debug + 'static + sealed::Sealed
{
    /// The erased kind.
    const KIND: Kind;
    /// Erase a slice.
    fn slice(s: &[Self]) -> Slice<'_>;
    /// Erase a writable slice.
    fn slice_mut(s: &mut [Self]) -> SliceMut<'_>;
    /// Erase an owned vector.
    fn into_payload(v: Vec<Self>) -> Payload;
    /// Recover an owned vector; panics when the payload holds another kind.
    fn from_payload(p: Payload) -> Vec<Self>;
    /// `op(a, b)`; panics for `Max`/`Min` on complex numbers.
    fn combine(op: ReduceOp, a: Self, b: Self) -> Self;
}

macro_rules! element_impl {
    ($t:ty, $k:ident, $sum:expr, $max:expr, $min:expr) => {
        impl Element for $t {
            const KIND: Kind = Kind::$k;
            fn slice(s: &[Self]) -> Slice<'_> {
                Slice::$k(s)
            }
            fn slice_mut(s: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$k(s)
            }
            fn into_payload(v: Vec<Self>) -> Payload {
                Payload::$k(v)
            }
            fn from_payload(p: Payload) -> Vec<Self> {
                match p {
                    Payload::$k(v) => v,
                    other => panic!(
                        "planewave-comm: expected a {:?} message, got {:?}",
                        Kind::$k,
                        other.kind()
                    ),
                }
            }
            fn combine(op: ReduceOp, a: Self, b: Self) -> Self {
                let (sum, max, min): (fn($t, $t) -> $t, fn($t, $t) -> $t, fn($t, $t) -> $t) =
                    ($sum, $max, $min);
                match op {
                    ReduceOp::Sum => sum(a, b),
                    ReduceOp::Max => max(a, b),
                    ReduceOp::Min => min(a, b),
                }
            }
        }
    };
}

element_impl!(f64, F64, |a, b| a + b, f64::max, f64::min);
element_impl!(i64, I64, i64::wrapping_add, Ord::max, Ord::min);
element_impl!(u64, U64, u64::wrapping_add, Ord::max, Ord::min);
element_impl!(u8, U8, u8::wrapping_add, Ord::max, Ord::min);
element_impl!(
    Complex64,
    C64,
    |a, b| a + b,
    |_, _| panic!("planewave-comm: max is not defined for complex numbers"),
    |_, _| panic!("planewave-comm: min is not defined for complex numbers")
);

/// Exclusive prefix sums of `counts` (the displacements of contiguous blocks).
pub fn displacements(counts: &[usize]) -> Vec<usize> {
    let mut d = Vec::with_capacity(counts.len());
    let mut acc = 0;
    for &c in counts {
        d.push(acc);
        acc += c;
    }
    d
}
