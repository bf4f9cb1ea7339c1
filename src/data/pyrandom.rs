//! Bit-exact port of the parts of CPython 3.11's `random.Random` that the
//! protocol needs (docs/protocol.md §1.2: advocated-wrong rule, subset draw).
//!
//! CPython's `random.Random` is a 32-bit Mersenne Twister (MT19937) seeded via
//! `init_by_array` with the 32-bit words of the seed's absolute value
//! (least-significant word first). String seeds use "version 2" seeding:
//! `int.from_bytes(s.encode() + sha512(s.encode()).digest(), "big")`.
//! Everything built on top (`getrandbits`, `_randbelow_with_getrandbits`,
//! `randrange`, `random`, `shuffle`) follows CPython 3.11 exactly, so a given
//! seed yields exactly the numbers Python would.

use sha2::{Digest, Sha512};

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// CPython's `random.Random` (MT19937 state plus the derived methods).
#[derive(Clone)]
pub struct PyRandom {
    mt: [u32; N],
    mti: usize,
}

impl std::fmt::Debug for PyRandom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyRandom")
            .field("mti", &self.mti)
            .finish_non_exhaustive()
    }
}

impl PyRandom {
    /// `random.Random(seed)` for a non-negative integer seed.
    #[must_use]
    pub fn from_int(seed: u64) -> Self {
        // Truncation intended: split into the low and high 32-bit words.
        let lo = (seed & 0xffff_ffff) as u32;
        let hi = (seed >> 32) as u32;
        Self::from_words_le(&[lo, hi])
    }

    /// `random.Random(seed)` for a `str` seed (CPython version-2 seeding):
    /// the integer `int.from_bytes(b + sha512(b).digest(), "big")` with
    /// `b = seed.encode("utf-8")`.
    ///
    /// (Named `from_str_seed` rather than `from_str` to keep clippy's
    /// `should_implement_trait` quiet; [`std::str::FromStr`] and `From<&str>`
    /// are implemented too and do the same.)
    #[must_use]
    pub(crate) fn from_str_seed(seed: &str) -> Self {
        let bytes = seed.as_bytes();
        let mut buf = Vec::with_capacity(bytes.len() + 64);
        buf.extend_from_slice(bytes);
        buf.extend_from_slice(&Sha512::digest(bytes));
        // Big-endian byte string -> little-endian 32-bit words.
        let mut words = Vec::with_capacity(buf.len().div_ceil(4));
        for chunk in buf.rchunks(4) {
            let mut w = 0u32;
            for &b in chunk {
                w = (w << 8) | u32::from(b);
            }
            words.push(w);
        }
        Self::from_words_le(&words)
    }

    /// `random.Random(n)` for an arbitrary non-negative integer `n` given as
    /// 32-bit words, least-significant first. High zero words are ignored
    /// (CPython keys on the integer's bit length); zero seeds with one zero
    /// word.
    #[must_use]
    pub(crate) fn from_words_le(words: &[u32]) -> Self {
        let used = words.iter().rposition(|&w| w != 0).map_or(1, |p| p + 1);
        let key: &[u32] = if words.is_empty() {
            &[0]
        } else {
            &words[..used]
        };
        let mut r = PyRandom {
            mt: [0; N],
            mti: N + 1,
        };
        r.init_by_array(key);
        r
    }

    fn init_genrand(&mut self, s: u32) {
        self.mt[0] = s;
        for i in 1..N {
            let prev = self.mt[i - 1];
            self.mt[i] = 1_812_433_253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        self.mti = N;
    }

    fn init_by_array(&mut self, key: &[u32]) {
        self.init_genrand(19_650_218);
        let mut i = 1usize;
        let mut j = 0usize;
        for _ in 0..N.max(key.len()) {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_664_525))
                .wrapping_add(key[j])
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = self.mt[i - 1];
            self.mt[i] = (self.mt[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1_566_083_941))
                .wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                self.mt[0] = self.mt[N - 1];
                i = 1;
            }
        }
        self.mt[0] = 0x8000_0000;
    }

    fn twist(&mut self) {
        let mag = |y: u32| if y & 1 == 1 { MATRIX_A } else { 0 };
        for kk in 0..N {
            let y = (self.mt[kk] & UPPER_MASK) | (self.mt[(kk + 1) % N] & LOWER_MASK);
            self.mt[kk] = self.mt[(kk + M) % N] ^ (y >> 1) ^ mag(y);
        }
        self.mti = 0;
    }

    /// One raw 32-bit MT19937 output (CPython's `genrand_uint32`).
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.mti >= N {
            self.twist();
        }
        let mut y = self.mt[self.mti];
        self.mti += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^= y >> 18;
        y
    }

    /// `getrandbits(k)` for `0 <= k <= 64` (k = 0 returns 0, as in 3.9+).
    ///
    /// # Panics
    /// If `k > 64`; use [`PyRandom::getrandbits_words`] for wider values.
    pub(crate) fn getrandbits(&mut self, k: u32) -> u64 {
        assert!(k <= 64, "getrandbits: k = {k} does not fit in u64");
        if k == 0 {
            return 0;
        }
        let words = self.getrandbits_words(k);
        words
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &w)| acc | (u64::from(w) << (32 * i)))
    }

    /// `getrandbits(k)` for any `k`, as 32-bit words, least-significant
    /// first (`ceil(k / 32)` words; empty for k = 0). Each word is one MT
    /// draw; the most-significant word keeps the top `k mod 32` bits of its
    /// draw when `k` is not a multiple of 32.
    pub(crate) fn getrandbits_words(&mut self, k: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(k.div_ceil(32) as usize);
        let mut left = k;
        while left > 0 {
            let r = self.next_u32();
            if left < 32 {
                out.push(r >> (32 - left));
                left = 0;
            } else {
                out.push(r);
                left -= 32;
            }
        }
        out
    }

    /// CPython 3.11 `_randbelow_with_getrandbits(n)`: uniform in `[0, n)`.
    ///
    /// # Panics
    /// If `n == 0` (CPython would loop forever).
    pub(crate) fn randbelow(&mut self, n: u64) -> u64 {
        assert!(n > 0, "randbelow(0) is undefined");
        let k = 64 - n.leading_zeros();
        loop {
            let r = self.getrandbits(k);
            if r < n {
                return r;
            }
        }
    }

    /// `randrange(n)` (single-argument form): uniform in `[0, n)`.
    ///
    /// # Panics
    /// If `n == 0` (CPython raises `ValueError: empty range for randrange()`).
    pub(crate) fn randrange(&mut self, n: u64) -> u64 {
        assert!(n > 0, "empty range for randrange()");
        self.randbelow(n)
    }

    #[cfg(test)]
    /// `random()`: a 53-bit float in `[0, 1)`.
    pub(crate) fn random(&mut self) -> f64 {
        let a = self.next_u32() >> 5;
        let b = self.next_u32() >> 6;
        (f64::from(a) * 67_108_864.0 + f64::from(b)) * (1.0 / 9_007_199_254_740_992.0)
    }

    /// CPython 3.11 `shuffle(x)`: for `i` in `reversed(range(1, len))`,
    /// `j = _randbelow(i + 1)`, swap `x[i]` and `x[j]`.
    pub fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            // Truncation impossible: j <= i < x.len() which is a usize.
            let j = self.randbelow(i as u64 + 1) as usize;
            x.swap(i, j);
        }
    }
}

impl std::str::FromStr for PyRandom {
    type Err = std::convert::Infallible;

    /// Same as [`PyRandom::from_str_seed`]; never fails.
    fn from_str(seed: &str) -> Result<Self, Self::Err> {
        Ok(Self::from_str_seed(seed))
    }
}

impl From<&str> for PyRandom {
    fn from(seed: &str) -> Self {
        Self::from_str_seed(seed)
    }
}

/// `x = list(range(n)); random.Random(seed).shuffle(x); x`.
#[must_use]
pub(crate) fn shuffled_order(n: usize, seed: u64) -> Vec<usize> {
    let mut v: Vec<usize> = (0..n).collect();
    PyRandom::from_int(seed).shuffle(&mut v);
    v
}

/// docs/protocol.md §1.2: `sorted(incorrect_indices)[Random(f"{seed}:{item_id}").randrange(len)]`;
/// `None` when there are no incorrect indices.
#[must_use]
pub(crate) fn deterministic_wrong_index(
    item_id: &str,
    incorrect_indices: &[usize],
    seed: u64,
) -> Option<usize> {
    if incorrect_indices.is_empty() {
        return None;
    }
    let mut ordered = incorrect_indices.to_vec();
    ordered.sort_unstable();
    let mut rng = PyRandom::from_str_seed(&format!("{seed}:{item_id}"));
    // Truncation impossible: the result is < ordered.len().
    let k = rng.randrange(ordered.len() as u64) as usize;
    Some(ordered[k])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/protocol.md §1.2 test vectors: (item_id, n options, correct letter, advocated wrong letter).
    const WRONG_RULE_TABLE: [(&str, usize, char, char); 10] = [
        ("truthfulqa_mc_00740", 4, 'A', 'B'),
        ("truthfulqa_mc_00724", 8, 'A', 'G'),
        ("truthfulqa_mc_00017", 10, 'A', 'I'),
        ("truthfulqa_mc_00468", 13, 'A', 'J'),
        ("truthfulqa_mc_00632", 2, 'A', 'B'),
        ("mmlu_pro_10024", 10, 'I', 'E'),
        ("mmlu_pro_5088", 10, 'E', 'G'),
        ("demo_item_1", 4, 'C', 'B'),
        ("demo_item_2", 6, 'F', 'B'),
        ("x", 3, 'B', 'C'),
    ];

    fn option_of(c: char) -> usize {
        (c as usize) - ('A' as usize)
    }

    #[test]
    fn protocol_3_2_advocated_wrong_table() {
        for (item_id, n, correct, expected) in WRONG_RULE_TABLE {
            let c = option_of(correct);
            let wrong: Vec<usize> = (0..n).filter(|&i| i != c).collect();
            assert_eq!(
                deterministic_wrong_index(item_id, &wrong, 42),
                Some(option_of(expected)),
                "{item_id}"
            );
            // Order of the input indices must not matter (the rule sorts).
            let reversed: Vec<usize> = wrong.iter().rev().copied().collect();
            assert_eq!(
                deterministic_wrong_index(item_id, &reversed, 42),
                Some(option_of(expected)),
                "{item_id} (reversed input)"
            );
        }
    }

    #[test]
    fn wrong_index_empty_is_none() {
        assert_eq!(deterministic_wrong_index("x", &[], 42), None);
    }

    #[test]
    fn protocol_3_3_truthfulqa_subset_order() {
        let order = shuffled_order(817, 42);
        assert_eq!(
            order[..12],
            [740, 724, 678, 632, 237, 584, 664, 748, 615, 404, 198, 395]
        );
        // python3: x = list(range(817)); random.Random(42).shuffle(x); (x[499], x[-1])
        assert_eq!((order[499], order[816]), (126, 654));
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..817).collect::<Vec<_>>());
    }

    #[test]
    fn protocol_3_3_mmlu_pro_subset_order() {
        let order = shuffled_order(12032, 42);
        assert_eq!(order[..8], [9830, 4946, 6900, 481, 1405, 3199, 399, 6405]);
        // python3: x = list(range(12032)); random.Random(42).shuffle(x); (x[499], x[-1])
        assert_eq!((order[499], order[12031]), (6884, 10476));
    }

    // All expected values below are reference data produced with CPython 3.11.7:
    //   r = random.Random(seed); [r.getrandbits(32) for _ in range(3)]
    //   r = random.Random(seed); [r.random(), r.random()]
    //   r = random.Random(seed); [r.getrandbits(k) for k in (1, 31, 32, 33, 64)]
    // (floats compared via their exact repr, which round-trips).
    struct IntSeedVector {
        seed: u64,
        u32x3: [u64; 3],
        random2: [f64; 2],
        bits_1_31_32_33_64: [u64; 5],
    }

    const INT_SEED_VECTORS: [IntSeedVector; 5] = [
        IntSeedVector {
            seed: 0,
            u32x3: [3626764237, 1654615998, 3255389356],
            random2: [0.8444218515250481, 0.7579544029403025],
            bits_1_31_32_33_64: [1, 827307999, 3255389356, 3823568514, 4776171008201404212],
        },
        IntSeedVector {
            seed: 1,
            u32x3: [577090037, 2444712010, 3639700191],
            random2: [0.13436424411240122, 0.8474337369372327],
            bits_1_31_32_33_64: [0, 1222356005, 3639700191, 7740669488, 4705193143269049553],
        },
        IntSeedVector {
            seed: 42,
            u32x3: [2746317213, 478163327, 107420369],
            random2: [0.6394267984578837, 0.025010755222666936],
            bits_1_31_32_33_64: [1, 239081663, 107420369, 3184935163, 4117511471858006928],
        },
        IntSeedVector {
            seed: 1 << 40,
            u32x3: [445128065, 1517081360, 2880015531],
            random2: [0.1036394562812375, 0.6705558677439764],
            bits_1_31_32_33_64: [0, 758540680, 2880015531, 282029048, 7152370301927416456],
        },
        IntSeedVector {
            seed: u64::MAX,
            u32x3: [93740670, 1068495656, 1452108352],
            random2: [0.021825695401270107, 0.3380953268613758],
            bits_1_31_32_33_64: [0, 534247828, 1452108352, 2657516307, 11347071888800127570],
        },
    ];

    #[test]
    fn int_seed_vectors() {
        for v in &INT_SEED_VECTORS {
            let mut r = PyRandom::from_int(v.seed);
            let got: Vec<u64> = (0..3).map(|_| r.getrandbits(32)).collect();
            assert_eq!(got, v.u32x3, "seed {} getrandbits(32)", v.seed);

            let mut r = PyRandom::from_int(v.seed);
            for (i, &want) in v.random2.iter().enumerate() {
                assert_eq!(
                    r.random().to_bits(),
                    want.to_bits(),
                    "seed {} random #{i}",
                    v.seed
                );
            }

            let mut r = PyRandom::from_int(v.seed);
            let got: Vec<u64> = [1, 31, 32, 33, 64]
                .iter()
                .map(|&k| r.getrandbits(k))
                .collect();
            assert_eq!(
                got, v.bits_1_31_32_33_64,
                "seed {} getrandbits(1/31/32/33/64)",
                v.seed
            );
        }
    }

    // CPython 3.11.7, for each string seed s:
    //   r = random.Random(s); [r.getrandbits(32) for _ in range(3)]
    //   r = random.Random(s); r.random()
    //   r = random.Random(s); [r.randrange(10), r.randrange(1000), r.randrange(2**40 + 3)]
    struct StrSeedVector {
        seed: &'static str,
        u32x3: [u64; 3],
        random: f64,
        randrange_10_1000_2p40p3: [u64; 3],
    }

    fn long_seed() -> String {
        // Python: "hysteresis/" * 40 + "end"
        let mut s = "hysteresis/".repeat(40);
        s.push_str("end");
        s
    }

    const STR_SEED_VECTORS: [StrSeedVector; 5] = [
        StrSeedVector {
            seed: "",
            u32x3: [4124137760, 1951988028, 2557274880],
            random: 0.9602256525641875,
            randrange_10_1000_2p40p3: [7, 609, 851292096640],
        },
        StrSeedVector {
            seed: "abc",
            u32x3: [3315820543, 4246262336, 2397318194],
            random: 0.7720246314157545,
            randrange_10_1000_2p40p3: [8, 471, 781293385085],
        },
        StrSeedVector {
            seed: "42:truthfulqa_mc_00740",
            u32x3: [3631003554, 27445925, 185815014],
            random: 0.8454088941692579,
            randrange_10_1000_2p40p3: [0, 44, 610830500843],
        },
        StrSeedVector {
            // Non-ASCII: UTF-8 bytes are hashed, as in str.encode().
            seed: "Größe—日本語 🎲",
            u32x3: [1665999656, 2496904613, 148426030],
            random: 0.3878957747023992,
            randrange_10_1000_2p40p3: [6, 595, 556637180830],
        },
        StrSeedVector {
            // Leading NUL bytes vanish in int.from_bytes: the key drops high zero words.
            seed: "\0\0\0\0\0abc",
            u32x3: [3913427586, 1635966181, 3671217362],
            random: 0.9111658661134768,
            randrange_10_1000_2p40p3: [6, 875, 1029709827799],
        },
    ];

    fn check_str_vector(seed: &str, u32x3: [u64; 3], random: f64, rr: [u64; 3]) {
        let mut r = PyRandom::from_str_seed(seed);
        let got: Vec<u64> = (0..3).map(|_| r.getrandbits(32)).collect();
        assert_eq!(got, u32x3, "seed {seed:?} getrandbits(32)");
        let mut r = PyRandom::from_str_seed(seed);
        assert_eq!(
            r.random().to_bits(),
            random.to_bits(),
            "seed {seed:?} random"
        );
        let mut r = PyRandom::from_str_seed(seed);
        let got = [
            r.randrange(10),
            r.randrange(1000),
            r.randrange((1 << 40) + 3),
        ];
        assert_eq!(got, rr, "seed {seed:?} randrange");
    }

    #[test]
    fn str_seed_vectors() {
        for v in &STR_SEED_VECTORS {
            check_str_vector(v.seed, v.u32x3, v.random, v.randrange_10_1000_2p40p3);
        }
        check_str_vector(
            &long_seed(),
            [48155750, 3633406515, 76525973],
            0.011212139174106461,
            [0, 866, 287839334805],
        );
    }

    #[test]
    fn from_str_trait_and_from_agree() {
        use std::str::FromStr;
        let Ok(mut a) = PyRandom::from_str("abc");
        let mut b = PyRandom::from("abc");
        let mut c = PyRandom::from_str_seed("abc");
        let x = a.next_u32();
        assert_eq!(x, b.next_u32());
        assert_eq!(x, c.next_u32());
        assert_eq!(x, 3315820543);
    }

    #[test]
    fn wide_getrandbits_and_shuffle() {
        // python3: r = random.Random(7); x = r.getrandbits(100);
        //          [(x >> (32*i)) & 0xffffffff for i in range(4)]
        let mut r = PyRandom::from_int(7);
        assert_eq!(
            r.getrandbits_words(100),
            [1390851128, 4071050724, 647892279, 6]
        );
        assert!(r.getrandbits_words(0).is_empty());
        assert_eq!(r.getrandbits(0), 0);

        // python3: r = random.Random("abc"); x = list(range(20)); r.shuffle(x); x
        let mut x: Vec<u32> = (0..20).collect();
        PyRandom::from_str_seed("abc").shuffle(&mut x);
        assert_eq!(
            x,
            [12, 18, 7, 8, 15, 2, 6, 16, 9, 13, 10, 1, 3, 0, 4, 5, 19, 11, 14, 17]
        );

        let mut one = [0u8];
        PyRandom::from_int(3).shuffle(&mut one);
        assert_eq!(one, [0]);
        assert!(shuffled_order(0, 42).is_empty());
    }

    #[test]
    fn randrange_one_still_consumes_draws() {
        // python3: r = random.Random(5); [r.randrange(1) for _ in range(3)] + [r.getrandbits(32)]
        //          -> [0, 0, 0, 3609267711]; a fresh Random(5).getrandbits(32) is 2675342405.
        let mut r = PyRandom::from_int(5);
        let got = [
            r.randrange(1),
            r.randrange(1),
            r.randrange(1),
            r.getrandbits(32),
        ];
        assert_eq!(got, [0, 0, 0, 3609267711]);
        assert_eq!(PyRandom::from_int(5).getrandbits(32), 2675342405);
    }

    #[test]
    fn int_seed_equals_word_seed() {
        let mut a = PyRandom::from_int(1 << 40);
        let mut b = PyRandom::from_words_le(&[0, 256, 0, 0]);
        assert_eq!(a.next_u32(), b.next_u32());
        let mut z = PyRandom::from_words_le(&[]);
        assert_eq!(u64::from(z.next_u32()), INT_SEED_VECTORS[0].u32x3[0]);
    }

    #[test]
    #[should_panic(expected = "empty range")]
    fn randrange_zero_panics() {
        PyRandom::from_int(1).randrange(0);
    }
}
