# Администрирование: доработка страниц «Очередь», «Серверы», «Пулы», «Пользователи» и «Группы», пароли, переименование.

queue-order-intro = Каждая очередь — это набор серверов, места которых делят её запросы; первая строка получает следующее свободное место. Сначала решает класс, затем порядок планировщика: оценка (планировщик «serial»), подсказка и время ожидания.
queue-position = Место
queue-position-value = { $position }-е
queue-score = Оценка
queue-waits-for = Ждёт
queue-line-heading = { $backends }: { $count ->
    [one] ждёт { $count } запрос
    [few] ждут { $count } запроса
   *[many] ждут { $count } запросов
}

backend-no-pool = Ни в одном пуле: никто не может вызвать его модели (они отвечают 404), пока какой-нибудь пул не включит этот сервер.
backend-saved-no-pool = Сервер «{ $name }» сохранён, но он не входит ни в один пул: его модели отвечают 404, пока какой-нибудь пул его не включит.
backend-detect-failed = Определение { $name } не удалось: причина указана в его карточке.
backend-detect-failed-unreachable = Определение не удалось: { $url } не ответил ({ $error }).
backend-detect-failed-status = Определение не удалось: { $url } ответил { $status } ({ $error }).
backend-detect-failed-not-models = Определение не удалось: { $url } ответил, но не списком моделей ({ $error }).
backend-part-pools = Пулы
backend-pools-hint = Пулы, в которых работает этот сервер; каждый пул решает, кто может вызывать его модели.
backend-pools-none = Пулов пока нет: создайте пул в разделе «Пулы» и добавьте в него этот сервер.

pool-access = Кто может им пользоваться
pool-access-everyone = Все
pool-access-everyone-hint = Любой человек и любой токен, независимо от групп.
pool-access-groups = Только участники этих групп
pool-access-nobody = Ни одна группа не отмечена: этим пулом никто не может пользоваться.
pool-groups-nobody = Никто
pool-widen-confirm = Открыть пул «{ $name }» для всех? Его моделями сможет пользоваться любой человек и любой токен, а не только разрешённые сейчас группы.
pool-widen-action = Открыть для всех

error-access-widening = Удаление всех групп открыло бы пул для всех: выберите «Все», чтобы это разрешить.

account-title = Учётная запись
account-intro = Вы вошли как { $username }. Здесь можно сменить пароль.
account-link = Ваша учётная запись: сменить пароль
account-password = Сменить пароль
account-current-password = Текущий пароль
account-new-password = Новый пароль
account-new-password-hint = В других браузерах, где вы вошли, сеанс завершится; в этом вы останетесь.
account-confirm-password = Новый пароль ещё раз
account-password-save = Сменить пароль
account-password-changed = Ваш пароль изменён.
account-password-mismatch = Два новых пароля не совпадают.
password-refused = Пароль не принят:
password-reason-password-too-short = Он слишком короткий: нужно не меньше { $min_length } символов.
password-reason-password-too-similar = Он слишком похож на имя пользователя или адрес электронной почты.
password-reason-password-too-common = Он слишком распространён: он есть в списках часто используемых паролей.
password-reason-password-entirely-numeric = Он состоит только из цифр.
error-wrong-password = Текущий пароль неверен.
user-priority = Приоритет
user-max-priority = токены до: { $priority }
user-groups-hint = Группы, в которые входит этот человек; группы по умолчанию и так включают всех.
user-groups-none = Пока нет групп для выбора (группы по умолчанию включают всех).

token-raised-by = Администратор { $admin } установил для этого токена приоритет «{ $priority }». Вы можете понизить его, но не повысить обратно: сами вы можете выбрать не выше «{ $max }».
token-raised-by-unknown = Администратор установил для этого токена приоритет «{ $priority }». Вы можете понизить его, но не повысить обратно: сами вы можете выбрать не выше «{ $max }».
