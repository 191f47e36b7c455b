"""matmul backward, worked solution: out = a @ b, a (n, k), b (k, m), dout (n, m).

out_ij = sum_l a_il b_lj, so dL/da_il = sum_j dout_ij b_lj and dL/db_lj = sum_i a_il dout_ij.
"""


def backward(dout, a, b):
    da = dout @ b.T          # (n, m) @ (m, k) -> a's shape (n, k)
    db = a.T @ dout          # (k, n) @ (n, m) -> b's shape (k, m)
    return da, db
