# SPDX-License-Identifier: BSD-3-Clause
"""The byte work of a snapshot (seer_envs._snapshot), nogil C at memory
speed: the checksum, and packing the arrays into one bytes object.

Checksum of 64-bit little-endian words ``w_0 .. w_{n-1}``:
``s1 = sum w_i`` and ``s2 = sum (i + 1) * w_i``, both mod 2**64 (a
Fletcher-style pair: a flipped bit changes ``s1``, words that moved change
``s2``).  It detects corruption, not tampering.

Why C: in NumPy the weighted sum needed a chunked rows-and-columns trick and
still read the data about twice; here it is one pass with four independent
accumulators, and :func:`pack` sums each chunk right after copying it, while
it is still in the cache, so the bytes are written and summed in one pass
over memory and allocated once (a fresh large buffer costs page faults).
"""

from cpython.buffer cimport PyBUF_WRITE
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset

cdef enum:
    CHUNK = 32768       # bytes copied, then summed from the cache (a multiple of 8)


cdef inline uint64_t _word(const unsigned char* p) noexcept nogil:
    # memcpy: the buffer may be unaligned; compilers make it one load
    cdef uint64_t w
    memcpy(&w, p, 8)
    return w


cdef void _sum(const unsigned char* p, Py_ssize_t nwords, uint64_t first,
               uint64_t* s1, uint64_t* s2) noexcept nogil:
    """Add words ``first + 1 ..`` (1-based weights) at ``p`` to ``s1``, ``s2``."""
    cdef uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0
    cdef uint64_t b0 = 0, b1 = 0, b2 = 0, b3 = 0
    cdef uint64_t k = first + 1, w
    cdef Py_ssize_t i = 0
    # four chains: the adds and multiplies of one word do not wait on the last
    while i + 4 <= nwords:
        w = _word(p + 8 * i)
        a0 += w
        b0 += k * w
        w = _word(p + 8 * i + 8)
        a1 += w
        b1 += (k + 1) * w
        w = _word(p + 8 * i + 16)
        a2 += w
        b2 += (k + 2) * w
        w = _word(p + 8 * i + 24)
        a3 += w
        b3 += (k + 3) * w
        k += 4
        i += 4
    while i < nwords:
        w = _word(p + 8 * i)
        a0 += w
        b0 += k * w
        k += 1
        i += 1
    s1[0] += a0 + a1 + a2 + a3
    s2[0] += b0 + b1 + b2 + b3


cdef inline void _put(unsigned char* p, uint64_t w) noexcept nogil:
    cdef int i
    for i in range(8):              # little-endian whatever the machine
        p[i] = (w >> (8 * i)) & 0xFF


def sums(const unsigned char[::1] data):
    """``(s1, s2)`` of ``data`` (a bytes-like object, its length a multiple of 8)."""
    cdef Py_ssize_t n = data.shape[0]
    cdef uint64_t s1 = 0, s2 = 0
    if n % 8:
        raise ValueError(f"the checksum reads 8-byte words; {n} bytes is not a whole number of them")
    if n:
        with nogil:
            _sum(&data[0], n // 8, 0, &s1, &s2)
    return s1, s2


cdef void _copy_sum(unsigned char* dst, const unsigned char* src, Py_ssize_t n, uint64_t first,
                    uint64_t* s1, uint64_t* s2) noexcept nogil:
    """Copy ``n`` bytes (a multiple of 8) to ``dst`` (word ``first`` of the
    output), summing them chunk by chunk from the cache."""
    cdef Py_ssize_t off = 0, m
    while off < n:
        m = n - off if n - off < CHUNK else CHUNK
        memcpy(dst + off, src + off, m)
        _sum(dst + off, m // 8, first + off // 8, s1, s2)
        off += m


def pack(bytes head, list parts):
    """One bytes object: ``head`` (its length a multiple of 8), each part of
    ``parts`` (C-contiguous byte buffers) padded with zeros to 8 bytes, and
    the 16-byte checksum of everything before it (``s1``, ``s2`` little-endian)."""
    cdef Py_ssize_t total = len(head), n, pad, off
    cdef uint64_t s1 = 0, s2 = 0
    cdef const unsigned char[::1] view
    cdef unsigned char* out
    if total % 8:
        raise ValueError("pack(): the head must be padded to 8 bytes")
    for part in parts:
        n = len(part)
        total += n + (8 - n % 8) % 8       # C division here (cdivision): no negative modulo
    res = PyBytes_FromStringAndSize(NULL, total + 16)
    out = <unsigned char*>PyBytes_AS_STRING(res)
    off = len(head)
    if off:
        _copy_sum(out, <const unsigned char*>PyBytes_AS_STRING(head), off, 0, &s1, &s2)
    for part in parts:
        view = part
        n = view.shape[0]
        if n == 0:
            continue
        pad = (8 - n % 8) % 8
        with nogil:
            _copy_sum(out + off, &view[0], n - n % 8, off // 8, &s1, &s2)
            if pad:                 # the last partial word, zero-padded
                memset(out + off + n + pad - 8, 0, 8)
                memcpy(out + off + n - n % 8, &view[n - n % 8], n % 8)
                _sum(out + off + n + pad - 8, 1, (off + n + pad) // 8 - 1, &s1, &s2)
        off += n + pad
    _put(out + off, s1)
    _put(out + off + 8, s2)
    return res


def empty(Py_ssize_t n):
    """``(b, view)``: a new bytes object of ``n`` bytes, not yet written, and
    a writable memoryview of it.  Only for :func:`seer_envs._snapshot.capture`,
    which fills it through ``view`` and :func:`seal`-s it before anyone else
    holds ``b`` (bytes are immutable once shared; ``view`` does not keep
    ``b`` alive)."""
    if n < 0:
        raise ValueError(f"empty(): n = {n} < 0")
    b = PyBytes_FromStringAndSize(NULL, n)
    return b, PyMemoryView_FromMemory(PyBytes_AS_STRING(b), n, PyBUF_WRITE)


def seal(bytes b):
    """Write the checksum of ``b``'s bytes before its last 16 into them
    (``b`` from :func:`empty`, not yet shared)."""
    cdef Py_ssize_t n = len(b) - 16
    cdef uint64_t s1 = 0, s2 = 0
    cdef unsigned char* p = <unsigned char*>PyBytes_AS_STRING(b)
    if n < 0 or n % 8:
        raise ValueError("seal(): the bytes before the checksum are not whole 8-byte words")
    with nogil:
        _sum(p, n // 8, 0, &s1, &s2)
        _put(p + n, s1)
        _put(p + n + 8, s2)
