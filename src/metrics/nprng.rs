//! Bit-exact port of `numpy.random.default_rng(seed)` (numpy >= 1.17 `Generator`
//! over `PCG64`) for the few calls the paired item bootstrap uses.
//!
//! Why: the artifact's bootstrap (docs/protocol.md §8) draws the bootstrap index matrix with
//! `rng = numpy.random.default_rng(12345 + k); idx = rng.integers(0, n, size=(10000, n))`
//! and takes percentiles of the replicates. Any other RNG gives CIs that differ
//! in the 3rd–4th decimal, so to reproduce the released CI digits exactly we
//! replicate numpy's stream:
//!
//! * `SeedSequence(seed)`: the integer entropy is split into 32-bit words
//!   (least-significant first, `0` -> `[0]`), hashed into a 4-word pool, and
//!   `generate_state(4, uint64)` yields the 128-bit PCG64 seed (words 0–1) and
//!   stream selector (words 2–3), each word pair read as `(hi << 64) | lo`.
//! * `PCG64`: 128-bit LCG with the default PCG multiplier, increment
//!   `(initseq << 1) | 1`, `pcg_srandom` seeding, XSL-RR 64-bit output (the
//!   state is advanced *before* the output is taken).
//! * 32-bit draws split one 64-bit output, low half first; the unused high half
//!   is kept inside the bit generator (`has_uint32` / `uinteger`) and therefore
//!   persists across separate `integers` calls.
//! * `Generator.integers(0, n)` (int64, `endpoint=False`) -> `_rand_int64` ->
//!   `random_bounded_uint64_fill(off = 0, rng = n - 1, use_masked = false)`:
//!   `rng == 0` -> zeros without drawing; `rng < 2^32 - 1` -> Lemire's method on
//!   32-bit draws; `rng == 2^32 - 1` -> raw 32-bit draws; larger -> Lemire's
//!   method on 64-bit draws.
//! * `Generator.random()` -> `(next_u64 >> 11) * 2^-53`.

const PCG_MULT: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

// SeedSequence hashing constants (numpy/random/bit_generator.pyx).
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;
const XSHIFT: u32 = 16;
const POOL_SIZE: usize = 4;

/// `numpy.random.default_rng(seed)`: a `Generator` over `PCG64`.
#[derive(Debug, Clone)]
pub(crate) struct NumpyRng {
    state: u128,
    inc: u128,
    has_u32: bool,
    u32_buf: u32,
}

fn hashmix(value: u32, hash_const: &mut u32) -> u32 {
    let mut v = value ^ *hash_const;
    *hash_const = hash_const.wrapping_mul(MULT_A);
    v = v.wrapping_mul(*hash_const);
    v ^ (v >> XSHIFT)
}

fn mix(x: u32, y: u32) -> u32 {
    let r = MIX_MULT_L
        .wrapping_mul(x)
        .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
    r ^ (r >> XSHIFT)
}

/// `SeedSequence(entropy).generate_state(n_words, uint32)` for entropy given
/// as 32-bit words (least-significant first), with no spawn key.
fn seed_sequence_state(entropy: &[u32], n_words: usize) -> Vec<u32> {
    let mut pool = [0u32; POOL_SIZE];
    let mut hc = INIT_A;
    for (i, slot) in pool.iter_mut().enumerate() {
        *slot = hashmix(entropy.get(i).copied().unwrap_or(0), &mut hc);
    }
    for i_src in 0..POOL_SIZE {
        for i_dst in 0..POOL_SIZE {
            if i_src != i_dst {
                let h = hashmix(pool[i_src], &mut hc);
                pool[i_dst] = mix(pool[i_dst], h);
            }
        }
    }
    for &e in entropy.iter().skip(POOL_SIZE) {
        for slot in pool.iter_mut() {
            let h = hashmix(e, &mut hc);
            *slot = mix(*slot, h);
        }
    }
    let mut hb = INIT_B;
    (0..n_words)
        .map(|i| {
            let mut v = pool[i % POOL_SIZE] ^ hb;
            hb = hb.wrapping_mul(MULT_B);
            v = v.wrapping_mul(hb);
            v ^ (v >> XSHIFT)
        })
        .collect()
}

impl NumpyRng {
    /// `numpy.random.default_rng(seed)` for a non-negative integer seed.
    #[must_use]
    pub(crate) fn new(seed: u64) -> Self {
        // Truncation intended: split into the low and high 32-bit words.
        let lo = (seed & 0xffff_ffff) as u32;
        let hi = (seed >> 32) as u32;
        let words = [lo, hi];
        let used = if hi == 0 { 1 } else { 2 };
        let w = seed_sequence_state(&words[..used], 8);
        // generate_state(4, uint64) views pairs of u32 little-endian.
        let u = |k: usize| u64::from(w[2 * k]) | (u64::from(w[2 * k + 1]) << 32);
        let initstate = (u128::from(u(0)) << 64) | u128::from(u(1));
        let initseq = (u128::from(u(2)) << 64) | u128::from(u(3));
        Self::from_pcg_seed(initstate, initseq)
    }

    /// `pcg64_srandom_r(initstate, initseq)`.
    fn from_pcg_seed(initstate: u128, initseq: u128) -> Self {
        let mut r = NumpyRng {
            state: 0,
            inc: (initseq << 1) | 1,
            has_u32: false,
            u32_buf: 0,
        };
        r.step();
        r.state = r.state.wrapping_add(initstate);
        r.step();
        r
    }

    #[cfg(test)]
    /// The PCG64 `(state, inc)` pair, as in `bit_generator.state["state"]`.
    #[must_use]
    pub(crate) fn pcg_state(&self) -> (u128, u128) {
        (self.state, self.inc)
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// One raw 64-bit PCG64 output (`bit_generator.random_raw()`).
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.step();
        // Truncations intended: XSL-RR folds the two 64-bit halves.
        let hi = (self.state >> 64) as u64;
        let lo = self.state as u64;
        let rot = (self.state >> 122) as u32;
        (hi ^ lo).rotate_right(rot)
    }

    /// numpy's buffered 32-bit draw: low half of a fresh 64-bit output, then
    /// its high half on the next call.
    pub(crate) fn next_u32(&mut self) -> u32 {
        if self.has_u32 {
            self.has_u32 = false;
            return self.u32_buf;
        }
        let v = self.next_u64();
        self.has_u32 = true;
        // Truncations intended: split into halves.
        self.u32_buf = (v >> 32) as u32;
        v as u32
    }

    #[cfg(test)]
    /// `Generator.random()`: `(next_u64 >> 11) * 2^-53`.
    pub(crate) fn random(&mut self) -> f64 {
        // Exact: a 53-bit integer converts to f64 without rounding.
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    fn lemire_u32(&mut self, rng: u32) -> u32 {
        let rng_excl = rng + 1;
        let mut m = u64::from(self.next_u32()) * u64::from(rng_excl);
        // Truncation intended: the low 32 bits are the leftover.
        let mut leftover = m as u32;
        if leftover < rng_excl {
            let threshold = (u32::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u64::from(self.next_u32()) * u64::from(rng_excl);
                leftover = m as u32;
            }
        }
        // Truncation impossible: the high half of a u32*u32 product fits.
        (m >> 32) as u32
    }

    fn lemire_u64(&mut self, rng: u64) -> u64 {
        let rng_excl = rng + 1;
        let mut m = u128::from(self.next_u64()) * u128::from(rng_excl);
        // Truncation intended: the low 64 bits are the leftover.
        let mut leftover = m as u64;
        if leftover < rng_excl {
            let threshold = (u64::MAX - rng) % rng_excl;
            while leftover < threshold {
                m = u128::from(self.next_u64()) * u128::from(rng_excl);
                leftover = m as u64;
            }
        }
        // Truncation impossible: the high half of a u64*u64 product fits.
        (m >> 64) as u64
    }

    /// Fill `out` exactly as `default_rng(..).integers(0, n, size=out.len())`
    /// would (int64 output, `endpoint=False`).
    ///
    /// # Panics
    /// If `n == 0` (numpy: `ValueError: high <= 0`) or `n > 2^63` (out of
    /// int64 bounds).
    pub(crate) fn fill_integers(&mut self, n: u64, out: &mut [u64]) {
        assert!(n > 0, "integers(0, n): high <= 0");
        assert!(
            n <= 1u64 << 63,
            "integers(0, n): high is out of bounds for int64"
        );
        let rng = n - 1;
        if rng == 0 {
            out.fill(0);
        } else if rng == u64::from(u32::MAX) {
            for o in out.iter_mut() {
                *o = u64::from(self.next_u32());
            }
        } else if let Ok(rng32) = u32::try_from(rng) {
            for o in out.iter_mut() {
                *o = u64::from(self.lemire_u32(rng32));
            }
        } else {
            for o in out.iter_mut() {
                *o = self.lemire_u64(rng);
            }
        }
    }

    /// `default_rng(..).integers(0, n, size=count)`; a `(rows, cols)` matrix is
    /// row-major, so `size=(rows, cols)` equals `count = rows * cols`.
    ///
    /// # Panics
    /// As [`NumpyRng::fill_integers`].
    pub(crate) fn integers(&mut self, n: u64, count: usize) -> Vec<u64> {
        let mut out = vec![0u64; count];
        self.fill_integers(n, &mut out);
        out
    }

    #[cfg(test)]
    /// A single `integers(0, n)` draw (identical to `count = 1`).
    ///
    /// # Panics
    /// As [`NumpyRng::fill_integers`].
    pub(crate) fn integer(&mut self, n: u64) -> u64 {
        let mut out = [0u64];
        self.fill_integers(n, &mut out);
        out[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // All expected values below are reference data produced with numpy 2.4.6
    // (Python 3.11.7):
    //   g = np.random.default_rng(seed); g.bit_generator.state["state"]
    //   np.random.default_rng(seed).bit_generator.random_raw(3)
    //   np.random.default_rng(seed).random(3)
    //   np.random.default_rng(seed).integers(0, n, size=20)   (fresh rng per n)
    // Floats are compared via their exact repr (which round-trips).
    struct SeedVector {
        seed: u64,
        state: u128,
        inc: u128,
        raw3: [u64; 3],
        random3: [f64; 3],
        /// integers(0, n, size=20) for n = 2, 3, 10, 500, 2500, 2**33.
        ints: [[u64; 20]; 6],
    }

    const NS: [u64; 6] = [2, 3, 10, 500, 2500, 1 << 33];

    const SEED_VECTORS: [SeedVector; 5] = [
        SeedVector {
            seed: 12345,
            state: 0x1905e0335aae96349199b0d09775add5,
            inc: 0xc9c7353e6e2b1f287d761f2d4027fae7,
            raw3: [0x3a32b18db2ffc19d, 0x51171315c9e4c4de, 0xcc2024823444efd9],
            random3: [0.22733602246716966, 0.31675833970975287, 0.7973654573327341],
            ints: [
                [1, 0, 1, 0, 0, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 1, 1],
                [2, 0, 2, 0, 0, 2, 1, 2, 2, 1, 2, 0, 1, 1, 0, 0, 0, 2, 1, 2],
                [6, 2, 7, 3, 2, 7, 6, 6, 9, 3, 8, 3, 5, 5, 2, 1, 2, 6, 6, 9],
                [
                    349, 113, 394, 158, 102, 398, 321, 338, 494, 195, 419, 166, 283, 299, 106, 93,
                    114, 336, 306, 470,
                ],
                [
                    1748, 568, 1971, 791, 510, 1993, 1606, 1690, 2471, 977, 2098, 832, 1418, 1495,
                    532, 466, 572, 1681, 1533, 2354,
                ],
                [
                    1952801563, 2720933419, 6849317124, 5808983389, 3359605457, 2858849871,
                    5139433059, 1604034440, 5778930414, 8090025011, 2132414451, 8150827029,
                    5731526079, 823756994, 3795373832, 7614804524, 5991079944, 2804380548,
                    6304394918, 1890944869,
                ],
            ],
        },
        SeedVector {
            seed: 12346,
            state: 0x6747ee4f379d0db873f0ddb966ee75aa,
            inc: 0x0316d59dd622ff3565785d65761af5a7,
            raw3: [0x79357d179033a147, 0x09ded1d6d7f4e809, 0xab178d7b7736ceeb],
            random3: [0.4734724218871649, 0.03855620856480224, 0.6683281351499445],
            ints: [
                [1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1],
                [1, 1, 2, 0, 1, 2, 2, 2, 1, 0, 2, 0, 1, 1, 1, 1, 1, 1, 0, 2],
                [5, 4, 8, 0, 4, 6, 6, 6, 4, 0, 8, 0, 3, 6, 4, 4, 4, 4, 0, 8],
                [
                    281, 236, 421, 19, 232, 334, 338, 339, 217, 23, 431, 3, 192, 300, 212, 200,
                    240, 234, 12, 430,
                ],
                [
                    1408, 1183, 2108, 96, 1164, 1670, 1693, 1698, 1089, 118, 2157, 15, 963, 1502,
                    1063, 1002, 1203, 1170, 61, 2152,
                ],
                [
                    4067097135, 331195309, 5740894966, 5837291203, 408194464, 53419435, 5162104364,
                    3444390280, 4021950890, 7395305092, 5739250466, 7321979016, 964124633,
                    5437897878, 1867020568, 6741562440, 2172831072, 2395023804, 2761391590,
                    7543300484,
                ],
            ],
        },
        SeedVector {
            seed: 42,
            state: 0xcea44f6798798f2aacbc7c9d68860ac8,
            inc: 0xfa505436c9a8416e66caf2e28d25abff,
            raw3: [0xc621fbcd16d92688, 0x705a5661a791ffc1, 0xdbcd12c26eda1624],
            random3: [0.7739560485559633, 0.4388784397520523, 0.8585979199113825],
            ints: [
                [0, 1, 1, 0, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0],
                [0, 2, 1, 1, 1, 2, 0, 2, 0, 0, 1, 2, 2, 2, 2, 2, 1, 0, 2, 1],
                [0, 7, 6, 4, 4, 8, 0, 6, 2, 0, 5, 9, 7, 7, 7, 7, 5, 1, 8, 4],
                [
                    44, 386, 327, 219, 216, 429, 42, 348, 100, 47, 263, 487, 367, 380, 358, 393,
                    256, 64, 419, 225,
                ],
                [
                    223, 1934, 1636, 1097, 1082, 2146, 214, 1743, 503, 235, 1316, 2439, 1839, 1902,
                    1793, 1965, 1283, 320, 2099, 1125,
                ],
                [
                    6648231834, 3769937091, 7375299972, 5990345756, 808977258, 8380532187,
                    6538140255, 6752240967, 1100487725, 3868785747, 3185130775, 7960850636,
                    5530759267, 7067468442, 3808898965, 1951965756, 4763847046, 548186055,
                    7109297633, 5425955872,
                ],
            ],
        },
        SeedVector {
            seed: 0,
            state: 0x1aa1b5345996452d09585eb7a69561e3,
            inc: 0x418ddadb3af71a82588133bc447873a9,
            raw3: [0xa30febcfd9c2825f, 0x4510bdf882d9d721, 0x0a7d3da94ecde8b8],
            random3: [0.6369616873214543, 0.2697867137638703, 0.04097352393619469],
            ints: [
                [1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
                [2, 1, 1, 0, 0, 0, 0, 0, 0, 2, 1, 2, 1, 1, 2, 2, 1, 1, 1, 2],
                [8, 6, 5, 2, 3, 0, 0, 0, 1, 8, 6, 9, 5, 6, 9, 7, 6, 5, 5, 9],
                [
                    425, 318, 255, 134, 153, 20, 37, 8, 87, 406, 324, 456, 251, 303, 485, 364, 316,
                    271, 279, 467,
                ],
                [
                    2126, 1592, 1277, 674, 769, 102, 188, 41, 438, 2033, 1623, 2281, 1259, 1516,
                    2426, 1823, 1580, 1359, 1399, 2337,
                ],
                [
                    5471459231, 2317450225, 351959890, 141971308, 6985938160, 7840510707,
                    5210961635, 6266327743, 4669703119, 8032210959, 7008128666, 23523537,
                    7365046654, 288497895, 6267692559, 1508870291, 7414650484, 4651116466,
                    2574505536, 3630855582,
                ],
            ],
        },
        SeedVector {
            // Two-word entropy (seed >= 2**32).
            seed: (1 << 40) + 7,
            state: 0xfa7e3f18087c4292231dc5e99d5a2373,
            inc: 0x3338387707b7520681124fb81b91462d,
            raw3: [0xd46e9e2034de21aa, 0x415badc99c087675, 0x275ed40f045acb84],
            random3: [0.829812891829413, 0.25530515834910417, 0.15379071585298754],
            ints: [
                [0, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1],
                [0, 2, 1, 0, 0, 0, 1, 2, 2, 2, 0, 1, 2, 0, 1, 0, 2, 0, 0, 2],
                [2, 8, 6, 2, 0, 1, 5, 6, 8, 7, 0, 4, 6, 0, 6, 0, 6, 1, 2, 9],
                [
                    103, 414, 304, 127, 8, 76, 252, 337, 442, 369, 47, 244, 336, 7, 323, 18, 348,
                    66, 122, 450,
                ],
                [
                    516, 2074, 1523, 638, 42, 384, 1261, 1686, 2212, 1847, 236, 1224, 1684, 38,
                    1618, 93, 1741, 334, 610, 2253,
                ],
                [
                    7128038464, 2193054611, 1321052190, 5793949931, 6346593451, 4209028578,
                    132275301, 320164099, 1148355813, 7741434020, 2906546918, 299731967,
                    2043976750, 1218060613, 715051576, 2704738810, 1881324964, 5977452735,
                    622744657, 7709097731,
                ],
            ],
        },
    ];

    #[test]
    fn seeding_raw_random_and_small_integers() {
        for v in &SEED_VECTORS {
            let rng = NumpyRng::new(v.seed);
            assert_eq!(
                rng.pcg_state(),
                (v.state, v.inc),
                "seed {} PCG64 state",
                v.seed
            );

            let mut rng = NumpyRng::new(v.seed);
            let raw: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
            assert_eq!(raw, v.raw3, "seed {} random_raw", v.seed);

            let mut rng = NumpyRng::new(v.seed);
            for (i, want) in v.random3.iter().enumerate() {
                assert_eq!(
                    rng.random().to_bits(),
                    want.to_bits(),
                    "seed {} random #{i}",
                    v.seed
                );
            }

            for (n, want) in NS.iter().zip(&v.ints) {
                let got = NumpyRng::new(v.seed).integers(*n, 20);
                assert_eq!(got, want, "seed {} integers(0, {n}, size=20)", v.seed);
            }
        }
    }

    #[test]
    fn bootstrap_matrix_stream_continuity() {
        // g = np.random.default_rng(12345)
        // m = g.integers(0, 500, size=(10000, 500)).ravel()
        // m[:20]; m[[1, 999, 123456, 2500000, 4999999]]
        // m2 = g.integers(0, 500, size=(10000, 500)).ravel(); m2[:10]; m2[-1]
        // g.random()
        let mut g = NumpyRng::new(12345);
        let m = g.integers(500, 10_000 * 500);
        assert_eq!(m[..20], SEED_VECTORS[0].ints[3]);
        let at: Vec<u64> = [1, 999, 123_456, 2_500_000, 4_999_999]
            .iter()
            .map(|&i| m[i])
            .collect();
        assert_eq!(at, [113, 347, 144, 232, 162]);
        let m2 = g.integers(500, 10_000 * 500);
        assert_eq!(m2[..10], [21, 360, 310, 375, 51, 274, 381, 487, 365, 473]);
        assert_eq!(m2[m2.len() - 1], 107);
        assert_eq!(g.random().to_bits(), 0.26294372389820553f64.to_bits());

        // g = np.random.default_rng(12346)
        // m = g.integers(0, 817, size=(10000, 817)).ravel(); m[:10]; m[8169999]
        let m = NumpyRng::new(12346).integers(817, 10_000 * 817);
        assert_eq!(m[..10], [460, 386, 689, 31, 380, 546, 553, 555, 356, 38]);
        assert_eq!(m[8_169_999], 729);
    }

    #[test]
    fn range_edge_paths() {
        // g = np.random.default_rng(99)
        // g.integers(0, 1, size=3) -> [0, 0, 0] (no draws); then g.integers(0, 10, size=3)
        let mut g = NumpyRng::new(99);
        assert_eq!(g.integers(1, 3), [0, 0, 0]);
        assert_eq!(g.integers(10, 3), [9, 5, 7]);
        assert_eq!(NumpyRng::new(99).integers(10, 3), [9, 5, 7]);
        // n = 2**32: raw 32-bit draws (low half of each 64-bit output first).
        assert_eq!(
            NumpyRng::new(99).integers(1 << 32, 5),
            [4115325593, 2173385197, 3254087975, 2427050077, 763719178]
        );
        assert_eq!(
            NumpyRng::new(99).integers((1 << 32) - 1, 5),
            [4115325592, 2173385196, 3254087974, 2427050076, 763719177]
        );
        // n = 2**32 + 1: first range on the 64-bit Lemire path.
        assert_eq!(
            NumpyRng::new(99).integers((1 << 32) + 1, 5),
            [2173385198, 2427050078, 2198662305, 4175508674, 2640988885]
        );
        assert_eq!(
            NumpyRng::new(99).integers(1 << 63, 5),
            [
                4667309173420421452,
                5212050354861684883,
                4721591347843348229,
                8966836599372438291,
                5671480445012158681
            ]
        );
    }

    #[test]
    fn half_word_buffer_persists_across_calls() {
        // g = np.random.default_rng(7); g.integers(0,10,size=3); g.integers(0,10,size=3)
        // -> [9, 6, 6] [8, 5, 7], identical to one size=6 call.
        let mut g = NumpyRng::new(7);
        assert_eq!(g.integers(10, 3), [9, 6, 6]);
        assert_eq!(g.integers(10, 3), [8, 5, 7]);
        assert_eq!(NumpyRng::new(7).integers(10, 6), [9, 6, 6, 8, 5, 7]);

        // g = np.random.default_rng(5); g.integers(0,10); g.random(); g.integers(0,10);
        // g.integers(0,10,size=2) -> 6, 0.8079407897364937, 8, [4, 5]
        // random() draws a full 64-bit word and leaves the buffered half alone.
        let mut g = NumpyRng::new(5);
        assert_eq!(g.integer(10), 6);
        assert_eq!(g.random().to_bits(), 0.8079407897364937f64.to_bits());
        assert_eq!(g.integer(10), 8);
        assert_eq!(g.integers(10, 2), [4, 5]);
    }

    #[test]
    fn next_u32_splits_low_half_first() {
        let mut a = NumpyRng::new(12345);
        let mut b = NumpyRng::new(12345);
        let w = a.next_u64();
        assert_eq!(u64::from(b.next_u32()), w & 0xffff_ffff);
        assert_eq!(u64::from(b.next_u32()), w >> 32);
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    #[should_panic(expected = "high <= 0")]
    fn zero_range_panics() {
        NumpyRng::new(1).integers(0, 1);
    }
}
