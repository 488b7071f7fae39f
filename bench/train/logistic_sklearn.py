"""scikit-learn's LogisticRegression() (defaults: multinomial, L2, C=1, lbfgs) on the split that
bench/train/logistic.ts writes to stdin as JSON: {"cases": [{"name", "train": {features, target}, "test": {...}}]}.
Prints {"name": {"train": accuracy, "test": accuracy, "classes", "coef"}} (two classes: the binary
coefficients split symmetrically; scikit-learn fits a binomial model there, whose penalty on the split weights
is twice ours, so those coefficients differ somewhat while the accuracies agree)."""
import json
import sys

from sklearn.linear_model import LogisticRegression

cases = json.load(sys.stdin)["cases"]
out = {}
for case in cases:
    model = LogisticRegression(max_iter=1000).fit(case["train"]["features"], case["train"]["target"])
    out[case["name"]] = {
        "train": model.score(case["train"]["features"], case["train"]["target"]),
        "test": model.score(case["test"]["features"], case["test"]["target"]),
        "classes": [str(c) for c in model.classes_],
        "coef": model.coef_.tolist() if len(model.classes_) > 2 else [(-model.coef_[0] / 2).tolist(), (model.coef_[0] / 2).tolist()],
    }
print(json.dumps(out))
