# cython: language_level=3
# distutils: language = c++
"""rigidiff._core: the compiled extension rigidiff runs on (the bindings only tests use are in
rigidiff._testing). Thin: validate, call C++, return numpy arrays."""

cdef extern from *:
    """
    #ifndef RIGIDIFF_EIGEN_VERSION
    #define RIGIDIFF_EIGEN_VERSION "unknown"
    #endif
    #ifndef RIGIDIFF_COMPILE_FLAGS
    #define RIGIDIFF_COMPILE_FLAGS "unknown"
    #endif
    #ifndef RIGIDIFF_CYTHON_VERSION
    #define RIGIDIFF_CYTHON_VERSION "unknown"
    #endif
    #ifndef RIGIDIFF_NUMPY_BUILD_VERSION
    #define RIGIDIFF_NUMPY_BUILD_VERSION "unknown"
    #endif
    """
    const char* RIGIDIFF_EIGEN_VERSION
    const char* RIGIDIFF_COMPILE_FLAGS
    const char* RIGIDIFF_CYTHON_VERSION
    const char* RIGIDIFF_NUMPY_BUILD_VERSION

include "_arrays.pxi"
include "_world_core.pxi"
include "_gradient_world.pxi"
include "_collision.pxi"
include "_ccd.pxi"
include "_contact_world.pxi"
include "_contact.pxi"
include "_batch_world.pxi"
include "_trajopt.pxi"
include "_linalg.pxi"
include "_barrier_world.pxi"
include "_projective_world.pxi"

EIGEN_VERSION = RIGIDIFF_EIGEN_VERSION.decode()
COMPILE_FLAGS = RIGIDIFF_COMPILE_FLAGS.decode()
CYTHON_VERSION = RIGIDIFF_CYTHON_VERSION.decode()
NUMPY_BUILD_VERSION = RIGIDIFF_NUMPY_BUILD_VERSION.decode()
