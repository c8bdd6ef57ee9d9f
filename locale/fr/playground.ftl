# Le bac à sable de discussion.

playground-title = Bac à sable
playground-intro = Envoyez une conversation à un modèle en votre nom, avec votre priorité héritée, et arrêtez-la à tout moment.
playground-model = Modèle
playground-message = Message
playground-send = Envoyer
playground-stop = Arrêter
