"""bench/sklearn_sparse.py: the baseline of bench/sparse.

scikit-learn's SGDClassifier with log loss, one epoch over the training
rows in memory (a CSR matrix, as load_svmlight_file reads libsvm), and
its AUC on the test rows.  Prints one line: examples/s of the fit (the
epoch alone, not the reading) and the AUC.

    /usr/bin/python3 bench/sklearn_sparse.py TRAIN.libsvm TEST.libsvm DIM
"""
import sys
import time
import warnings

from sklearn.datasets import load_svmlight_file
from sklearn.linear_model import SGDClassifier
from sklearn.metrics import roc_auc_score


def main():
    train, test, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
    x, y = load_svmlight_file(train, n_features=dim)
    xt, yt = load_svmlight_file(test, n_features=dim)
    clf = SGDClassifier(loss="log_loss", max_iter=1, tol=None, shuffle=False,
                        random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # one epoch: "not converged"
        t0 = time.perf_counter()
        clf.fit(x, y)
        dt = time.perf_counter() - t0
    auc = roc_auc_score(yt, clf.decision_function(xt))
    print("%.1f %.6f" % (x.shape[0] / dt, auc))


if __name__ == "__main__":
    main()
