/* SPDX-License-Identifier: BSD-3-Clause
 *
 * A 64-bit position-weighted checksum of 64-bit words w_0 .. w_{n-1}:
 * s1 = sum w_i and s2 = sum (i + 1) * w_i, both mod 2^64 (Fletcher-style: a
 * flipped bit changes s1, words that moved change s2).  It detects
 * corruption, not tampering.  Snapshots use it (seer_envs._snapbytes, the
 * format in seer_envs/_snapshot.py), and Engine.export_state sums the
 * events it writes while they are in the cache, so a snapshot's bytes are
 * written and summed in one pass over memory.
 *
 * Linear in the words: a range's sums taken from its own first word combine
 * into a stream's as s2 += first * s1 (seer_sum64 takes `first` directly).
 * Words are read in the machine's byte order (snapshots move between
 * machines of one architecture).
 */
#ifndef SEER_CHECKSUM_H
#define SEER_CHECKSUM_H

#include <stdint.h>
#include <string.h>

/* Add words first+1 .. (1-based weights) at p, nwords of them, to *s1, *s2.
 *
 * Adds only, in L lanes (word i = L q + l goes to lane l), which compilers
 * vectorise: per lane a running sum S_l (its words so far) and the sum T_l
 * of those running sums.  After Q rows, S_l = sum_q w_{Lq+l} and
 * T_l = sum_q (Q - q) w_{Lq+l}, so sum_q q w_{Lq+l} = Q S_l - T_l, and
 *   sum_i (first + 1 + i) w_i = (first + 1) s1 + sum_l (L (Q S_l - T_l) + l S_l)
 * (all mod 2^64: the identities hold in that ring).  The words past the
 * last whole row are weighed one by one. */
#define SEER_SUM_LANES 8
static inline void seer_sum64(const unsigned char* p, int64_t nwords, uint64_t first,
                              uint64_t* s1, uint64_t* s2) {
    uint64_t S[SEER_SUM_LANES] = {0}, T[SEER_SUM_LANES] = {0}, w, a = 0, b = 0, k;
    int64_t q, Q = nwords / SEER_SUM_LANES, i;
    int l;
    for (q = 0; q < Q; q++) {
        for (l = 0; l < SEER_SUM_LANES; l++) {
            memcpy(&w, p + 8 * (q * SEER_SUM_LANES + l), 8);  /* unaligned: one load */
            S[l] += w;
            T[l] += S[l];
        }
    }
    for (l = 0; l < SEER_SUM_LANES; l++) {
        a += S[l];
        b += SEER_SUM_LANES * ((uint64_t)Q * S[l] - T[l]) + (uint64_t)l * S[l];
    }
    b += (first + 1) * a;
    for (i = Q * SEER_SUM_LANES, k = first + 1 + (uint64_t)i; i < nwords; i++, k++) {
        memcpy(&w, p + 8 * i, 8);
        a += w;
        b += k * w;
    }
    *s1 += a;
    *s2 += b;
}

#endif
