def f(x):
    assert x > 0, "x must be positive"
    print("x is", x)
    return x
