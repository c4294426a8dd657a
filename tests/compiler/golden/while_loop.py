import autoloop as al


def f(n):
    i, result = al.constant(0), al.constant(0)
    while i < n:
        result += i * i
        i += 1
    return result
