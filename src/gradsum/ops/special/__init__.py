"""torch.special's functions by family: ``erf`` (error function and normal distribution),
``gamma``, ``bessel``, ``polynomials``, ``entropy`` (``xlogy``, ``entr``).
"""
