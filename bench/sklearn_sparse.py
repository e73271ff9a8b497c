"""bench/sklearn_sparse.py: the baseline of bench/sparse.

scikit-learn's SGDClassifier with log loss, one epoch over the training
rows in memory (a CSR matrix, as load_svmlight_file reads libsvm), and
its AUC on the test rows, fitted twice: with shuffle=False (the rows in
file order) and with shuffle=True (SGDClassifier's default: the rows in
a random order, drawn again each epoch).  Prints one line: examples/s of
each fit (the epoch alone, not the reading) and each one's AUC,

    IN-ORDER-EXAMPLES/S IN-ORDER-AUC SHUFFLED-EXAMPLES/S SHUFFLED-AUC

    /usr/bin/python3 bench/sklearn_sparse.py TRAIN.libsvm TEST.libsvm DIM
"""
import sys
import time
import warnings

from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import roc_auc_score


def fit(x, y, xt, yt, shuffle):
    clf = SGDClassifier(loss="log_loss", max_iter=1, tol=None,
                        shuffle=shuffle, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch: "not converged"
        t0 = time.perf_counter()
        clf.fit(x, y)
        dt = time.perf_counter() - t0
    return x.shape[0] / dt, roc_auc_score(yt, clf.decision_function(xt))


def main():
    train, test, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
    x, y = load_svmlight_file(train, n_features=dim)
    xt, yt = load_svmlight_file(test, n_features=dim)
    a = fit(x, y, xt, yt, False)
    b = fit(x, y, xt, yt, True)
    print("%.1f %.6f %.1f %.6f" % (a[0], a[1], b[0], b[1]))


if __name__ == "__main__":
    main()
