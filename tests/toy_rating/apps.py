from annotate import kinds


class ToyRatingConfig(kinds.ProtocolAppConfig):
    """The toy rating protocol: answers and gold ratings in the app's own tables."""

    name = "tests.toy_rating"
    label = "toy_rating"
    verbose_name = "Toy: rate a summary"
    protocols = ("tests.toy_rating.protocol:RatingProtocol",)
