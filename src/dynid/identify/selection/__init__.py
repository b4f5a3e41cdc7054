"""The model choice's machinery: the candidates, the blocked cross-validation folds, the method's choice and
the table the result keeps."""
