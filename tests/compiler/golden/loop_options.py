import autoloop as al


def f(n):
    x = al.constant([0])
    i = 0
    while i < n:
        al.set_loop_options(shape_invariants=[(x, al.TensorShape([None]))])
        x = al.concat([x, al.stack([i])], 0)
        i += 1
    return x
