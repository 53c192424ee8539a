# SPDX-License-Identifier: BSD-3-Clause
"""The byte work of a snapshot (seer_envs.snapshot.whole), nogil C at memory
speed: packing the arrays into one bytes object, writing into a fresh one,
and sealing it with its checksum (an XXH3 digest, computed by the
``xxhash`` package in seer_envs.snapshot.whole: it detects accidents, not
tampering).  An env's snapshot is written in place (:func:`empty`,
:func:`place`, the engine's ``export_state(out=)``, :func:`seal`), so its
bytes are allocated once (a fresh large buffer costs page faults).
"""

from cpython.buffer cimport (PyBUF_C_CONTIGUOUS, PyBUF_WRITABLE, PyBUF_WRITE, PyBuffer_Release,
                             PyObject_GetBuffer)
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize
from cpython.memoryview cimport PyMemoryView_FromMemory
from libc.stdint cimport uint64_t
from libc.string cimport memcpy, memset

cdef inline void _put(unsigned char* p, uint64_t w) noexcept nogil:
    cdef int i
    for i in range(8):              # little-endian whatever the machine
        p[i] = (w >> (8 * i)) & 0xFF


def pack(bytes head, list parts, Py_ssize_t tail=8):
    """One bytes object: ``head`` (its length a multiple of 8), each part of
    ``parts`` (C-contiguous byte buffers) padded with zeros to 8 bytes, and
    ``tail`` bytes for the checksum, not yet written (:func:`seal`)."""
    cdef Py_ssize_t total = len(head), n, pad, off
    cdef const unsigned char[::1] view
    cdef unsigned char* out
    if total % 8:
        raise ValueError("pack(): the head must be padded to 8 bytes")
    if tail < 0:
        raise ValueError(f"pack(): tail {tail} < 0")
    for part in parts:
        n = len(part)
        total += n + (8 - n % 8) % 8       # C division here (cdivision): no negative modulo
    res = PyBytes_FromStringAndSize(NULL, total + tail)
    out = <unsigned char*>PyBytes_AS_STRING(res)
    off = len(head)
    memcpy(out, PyBytes_AS_STRING(head), off)
    for part in parts:
        view = part
        n = view.shape[0]
        if n == 0:
            continue
        pad = (8 - n % 8) % 8
        with nogil:
            memcpy(out + off, &view[0], n)
            memset(out + off + n, 0, pad)
        off += n + pad
    memset(out + off, 0, tail)
    return res


def empty(Py_ssize_t n):
    """``(b, view)``: a new bytes object of ``n`` bytes, not yet written, and
    a writable memoryview of it.  Only for :func:`seer_envs.snapshot.whole.capture`,
    which fills it through ``view`` and :func:`seal`-s it before anyone else
    holds ``b`` (bytes are immutable once shared; ``view`` does not keep
    ``b`` alive)."""
    if n < 0:
        raise ValueError(f"empty(): n = {n} < 0")
    b = PyBytes_FromStringAndSize(NULL, n)
    return b, PyMemoryView_FromMemory(PyBytes_AS_STRING(b), n, PyBUF_WRITE)


def seal(bytes b, uint64_t digest):
    """Write ``digest`` (little-endian) into the last 8 bytes of ``b`` (from
    :func:`empty` or :func:`pack`, not yet shared: bytes are immutable once
    anyone else holds them)."""
    cdef Py_ssize_t n = len(b) - 8
    if n < 0:
        raise ValueError("seal(): fewer than 8 bytes")
    _put(<unsigned char*>PyBytes_AS_STRING(b) + n, digest)


def place(view, list items):
    """Into ``view`` (a writable buffer, :func:`empty`'s), for each
    ``(offset, nbytes, source)`` of ``items``: ``source``'s bytes (a
    C-contiguous buffer of ``nbytes``, or None: written later) at ``offset``,
    then zeros up to the next multiple of 8.  One C call for a snapshot's
    small arrays instead of a few NumPy calls each."""
    cdef Py_buffer out, src
    cdef Py_ssize_t off, nb, pad
    PyObject_GetBuffer(view, &out, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS)
    try:
        for off, nb, source in items:
            pad = (8 - nb % 8) % 8
            if off < 0 or off + nb + pad > out.len:
                raise ValueError(f"place(): {nb} bytes at {off} run past the buffer's {out.len}")
            if source is not None:
                PyObject_GetBuffer(source, &src, PyBUF_C_CONTIGUOUS)
                try:
                    if src.len != nb:
                        raise ValueError(f"place(): a source of {src.len} bytes for {nb}")
                    memcpy(<char*>out.buf + off, src.buf, nb)
                finally:
                    PyBuffer_Release(&src)
            memset(<char*>out.buf + off + nb, 0, pad)
    finally:
        PyBuffer_Release(&out)
