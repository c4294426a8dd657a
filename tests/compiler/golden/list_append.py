import autoloop as al


def f(n):
    squares = []
    for i in range(n):
        squares.append(i * i)
    return al.stack(squares)
