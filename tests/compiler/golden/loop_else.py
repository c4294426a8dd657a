def f(xs, target):
    for x in xs:
        if x == target:
            found = True
            break
    else:
        found = False
    return found
