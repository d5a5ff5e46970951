"""Products: ``products`` (matmul, mm, bmm, mv, dot, outer, linear), ``fused`` (the add*mm
family), ``contractions`` (einsum, tensordot, kron, cdist).
"""
