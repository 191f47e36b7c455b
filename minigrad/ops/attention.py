"""scaled_dot_product_attention (is_causal, attn_mask)."""


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    raise NotImplementedError
