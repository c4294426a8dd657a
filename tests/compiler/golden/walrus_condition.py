def f(values):
    total = 0
    while (item := values.pop()) > 0:
        total += item
    return total
