"""(to be written)"""
def group_norm(*a, **k): raise NotImplementedError


def instance_norm(*a, **k): raise NotImplementedError
