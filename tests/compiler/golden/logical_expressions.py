def f(x, y):
    inside = 0 <= x < y
    return (x > 0 and y > 0) or not inside
