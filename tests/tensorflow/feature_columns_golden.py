"""Prints the golden ids of data/feature_columns_test.cc: what TensorFlow's
own feature columns make of the test's census rows, and of rows of
variable-length features (as VarLenFeature parses them: SparseTensors), each
categorical column read back through an indicator_column and input_layer
(its multi-hot vector's non-zero places, with their counts, in ascending
order).

  /opt/pstrain/tf-venv/bin/python tests/tensorflow/feature_columns_golden.py
"""
import numpy as np
import tensorflow as tf

fc = tf.feature_column

# The rows of the test (age, education, occupation, marital_status,
# hours_per_week), "?" and an unknown value included.
ROWS = [
    (25, "11th", "Machine-op-inspct", "Never-married", 40),
    (38, "HS-grad", "Farming-fishing", "Married-civ-spouse", 50),
    (17, "Bachelors", "?", "Unmarried", 13),
    (65, "Doctorate", "Prof-specialty", "Divorced", 99),
    (30, "Masters", "Exec-managerial", "Married-civ-spouse", 45),
]
features = {
    "age": tf.constant([[float(r[0])] for r in ROWS]),
    "education": tf.constant([[r[1]] for r in ROWS]),
    "occupation": tf.constant([[r[2]] for r in ROWS]),
    "marital_status": tf.constant([[r[3]] for r in ROWS]),
    "hours_per_week": tf.constant([[float(r[4])] for r in ROWS]),
}
age = fc.numeric_column("age")
age_buckets = fc.bucketized_column(age, boundaries=[18, 25, 30, 35, 40, 45, 50, 55, 60, 65])
education = fc.categorical_column_with_vocabulary_list(
    "education", ["Bachelors", "HS-grad", "11th", "Masters", "9th"])
marital = fc.categorical_column_with_vocabulary_list(
    "marital_status", ["Married-civ-spouse", "Divorced", "Never-married"], num_oov_buckets=3)
occupation = fc.categorical_column_with_hash_bucket("occupation", hash_bucket_size=1000)
cross2 = fc.crossed_column(["education", "occupation"], hash_bucket_size=1000)
cross3 = fc.crossed_column([age_buckets, "education", "occupation"], hash_bucket_size=1000)
hours = fc.categorical_column_with_identity("hours_per_week", num_buckets=100)

COLUMNS = [("age_buckets", age_buckets), ("education", education), ("marital_status", marital),
           ("occupation", occupation), ("education_x_occupation", cross2),
           ("age_buckets_x_education_x_occupation", cross3), ("hours_per_week", hours)]

# Rows of variable-length features (genres: strings, tags: int64 ids) beside
# one string each (education); a row without genres or tags included.
VARLEN_ROWS = [
    (["Action", "Comedy"], [3, 7], "11th"),
    ([], [], "HS-grad"),
    (["Drama", "Film-Noir", "Action"], [9], "Bachelors"),
]
varlen_features = {
    "genres": tf.ragged.constant([r[0] for r in VARLEN_ROWS], dtype=tf.string).to_sparse(),
    "tags": tf.ragged.constant([r[1] for r in VARLEN_ROWS], dtype=tf.int64).to_sparse(),
    "education": tf.constant([[r[2]] for r in VARLEN_ROWS]),
}
genres = fc.categorical_column_with_vocabulary_list(
    "genres", ["Action", "Comedy", "Drama"], num_oov_buckets=2)
VARLEN_COLUMNS = [
    ("genres", genres),
    ("genres_hashed", fc.categorical_column_with_hash_bucket("genres", hash_bucket_size=100)),
    ("genres_x_education", fc.crossed_column(["genres", "education"], hash_bucket_size=1000)),
    ("tags", fc.categorical_column_with_identity("tags", num_buckets=10)),
]


def print_ids(features, columns):
    for name, column in columns:
        dense = tf.compat.v1.feature_column.input_layer(
            features, [fc.indicator_column(column)]).numpy()
        rows = []
        for r in dense:
            ids = []
            for i in np.nonzero(r)[0]:
                ids += [int(i)] * int(round(r[i]))
            rows.append("{" + ", ".join(str(i) for i in ids) + "}")
        print('  {"%s", {%s}},' % (name, ", ".join(rows)))


def main():
    print_ids(dict(features, hours_per_week=tf.cast(features["hours_per_week"], tf.int64)),
              COLUMNS)
    print("variable-length:")
    print_ids(varlen_features, VARLEN_COLUMNS)


if __name__ == "__main__":
    main()
