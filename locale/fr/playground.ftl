# Le bac à sable de conversation.

playground-title = Bac à sable
playground-intro = Envoyez une conversation à un modèle en votre nom, avec votre priorité héritée, et arrêtez-la à tout moment.
playground-model = Modèle
playground-message = Message
playground-send = Envoyer
playground-stop = Arrêter
playground-conversation = Conversation
playground-clear = Nouvelle conversation
playground-empty = Rien d’envoyé pour l’instant. Choisissez un modèle, écrivez un message et appuyez sur Envoyer.
playground-message-hint = Ctrl+Entrée envoie le message.
playground-no-models = Aucun modèle ne vous est accessible.
playground-no-models-option = Aucun modèle
playground-empty-message = Écrivez d’abord un message.
playground-you = Vous
playground-assistant = Modèle
playground-runs-at = Vos requêtes s’exécutent avec la priorité { $priority }.
playground-one-class = La priorisation des requêtes est désactivée : toutes les requêtes partagent une seule classe.
playground-waiting = En attente d’un serveur de modèles libre…
playground-streaming = Réponse en cours…
playground-done = Réponse terminée.
playground-stopped = Arrêté.
playground-stopped-before = Arrêté avant le début de la réponse.
playground-stopped-partial = Arrêté ; la réponse est incomplète.
playground-cut-short = La réponse a été interrompue.
playground-ran-at = Cette réponse s’est exécutée avec la priorité { $priority }.
playground-answered-by = Réponse de { $backend } après { $wait } s en file ({ $seconds } s au total).
