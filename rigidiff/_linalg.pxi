# The dense-product kernel of the derivative code (linalg/dense_product.hpp), for show_config.


def _dense_product_uses_avx2():
    """Whether the core's dense products run their AVX2/FMA kernel on this CPU."""
    return bool(api.linalgUsesAvx2())
