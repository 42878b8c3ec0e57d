# Fast argument checks: a native-endian, aligned, C-contiguous float64 ndarray of the right shape passes
# through untouched; anything else (lists, other dtypes, strided, negative-stride, unaligned or byte-swapped
# arrays) is converted once by _convert, and a wrong shape or type raises ValueError naming the argument.
# Every float array that reaches C++ goes through _vec, _mat or _f64 (C++ reads raw native doubles).
cimport numpy as cnp
import numpy as np

cnp.import_array()


cdef inline bint _is_f64(object x):
    # the type number of '>f8' is NPY_DOUBLE as well: the byte order and alignment are checked separately
    return (cnp.PyArray_Check(x) and cnp.PyArray_TYPE(<cnp.ndarray>x) == cnp.NPY_DOUBLE
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray>x))


cdef cnp.ndarray _convert(object x, str name, str shape):
    # only real numbers convert: strings, bytes, times, objects and complex values are refused
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a float64 array of shape {shape}: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real-valued array of shape {shape}, got dtype {arr.dtype}")
    # a native-endian (NPY_DOUBLE is the machine's float64), aligned, C-contiguous copy, made in C: no
    # Python code runs here, so no other thread can change the world between a check and its use
    return <cnp.ndarray>cnp.PyArray_FROM_OTF(arr, cnp.NPY_DOUBLE, cnp.NPY_ARRAY_IN_ARRAY)


cdef cnp.ndarray _f64(object x, str name, str shape):
    """x as a native float64 C-contiguous array of any shape; the caller checks it against ``shape``."""
    if _is_f64(x):
        return <cnp.ndarray>x
    return _convert(x, name, shape)


cdef inline cnp.ndarray _vec(object x, Py_ssize_t n, str name, str why=""):
    """x as a float64 (n,) array; ``why`` says where n comes from when another argument sets it."""
    if _is_f64(x) and cnp.PyArray_NDIM(<cnp.ndarray>x) == 1 and cnp.PyArray_DIM(<cnp.ndarray>x, 0) == n:
        return <cnp.ndarray>x
    cdef cnp.ndarray arr = _convert(x, name, f"({n},)")
    if cnp.PyArray_NDIM(arr) != 1 or cnp.PyArray_DIM(arr, 0) != n:
        raise ValueError(f"{name} must have shape ({n},){why}, got {np.shape(arr)}")
    return arr


cdef inline cnp.ndarray _mat(object x, Py_ssize_t n, Py_ssize_t m, str name, str why=""):
    """x as a float64 (n, m) array; n < 0 accepts any number of rows; ``why`` says where n comes from when
    another argument sets it (so that a wrong length there is not blamed on this argument alone)."""
    cdef str shape = f"({'N' if n < 0 else n}, {m})"
    cdef cnp.ndarray arr = <cnp.ndarray>x if _is_f64(x) else _convert(x, name, shape)
    if cnp.PyArray_NDIM(arr) != 2 or (n >= 0 and cnp.PyArray_DIM(arr, 0) != n) or cnp.PyArray_DIM(arr, 1) != m:
        raise ValueError(f"{name} must have shape {shape}{why}, got {np.shape(arr)}")
    return arr


cdef inline double* _ptr(cnp.ndarray a):
    return <double*>cnp.PyArray_DATA(a)


cdef inline cnp.ndarray _empty1(Py_ssize_t n):
    cdef cnp.npy_intp dims[1]
    dims[0] = n
    return cnp.PyArray_EMPTY(1, dims, cnp.NPY_DOUBLE, 0)


cdef inline cnp.ndarray _empty2(Py_ssize_t n, Py_ssize_t m):
    cdef cnp.npy_intp dims[2]
    dims[0] = n
    dims[1] = m
    return cnp.PyArray_EMPTY(2, dims, cnp.NPY_DOUBLE, 0)


cdef inline cnp.ndarray _empty3(Py_ssize_t n, Py_ssize_t m, Py_ssize_t k):
    cdef cnp.npy_intp dims[3]
    dims[0] = n
    dims[1] = m
    dims[2] = k
    return cnp.PyArray_EMPTY(3, dims, cnp.NPY_DOUBLE, 0)
