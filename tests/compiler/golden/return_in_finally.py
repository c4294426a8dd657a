def f(ks):
    for k in ks:
        try:
            if k > 2:
                return k
        finally:
            if k == 1:
                break
    return -1
