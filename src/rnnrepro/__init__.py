"""rnnrepro: reference reproduction of five papers on recurrent cells and macro models."""
